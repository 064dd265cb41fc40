"""Parser benchmark: scrapy_rfc9309.RobotsTxt against Protego, in one run.

Measured as a crawl pays it, on the real-world corpus (the folder ``$ROBOTSTXT_CORPUS`` names), each
body cut at the
512,000 octets a crawl reads:

* first decision per site: parse + compile for the agent + one check, against
  Protego's parse + one ``can_fetch``; the median of the per-file ratios
  (each file timed for both parsers in turn, best of the rounds), and the
  ratio of the totals; GC on, then the same with GC off, shown apart;
* checks, once compiled: the corpus' real URLs (``urls/anubhav_bench``) and
  URLs derived from every file's own rules;
* a site's first decisions: parse + compile + its first 16 and 100 real
  URLs checked (its URLs repeated when it has fewer), what a crawl of that
  many pages pays in all, with the first checks that scan few rules and
  the compiling they lead to;
* memory retained by a parsed file after one check (tracemalloc), its body
  counted: each parser is given a fresh copy of the body to keep or drop;
* 1,000 rotating User-Agents: checks on the form the site cache keeps
  (``CompactRobots``) of the 20 largest files, each check with the next of
  1,000 User-Agent values, against checks with one agent (an unseen agent
  must cost a look-up, never a parse) and against Protego;
* hostile files: 20,000 wildcard rules (8-octet pieces; 1-2 octet pieces),
  a check once compiled (after 40) and parse + compile + 20 checks; 2,000 agents over 2,000 rules;
  and the worst cases we know for a check.

Protego is given bodies decoded as Scrapy decodes them (``utf-8``, errors
ignored), which is the work Scrapy does before calling it.

Usage: ``python benchmarks/parser.py [--rounds N]``. Prints ratios (how many
times cheaper ours is than Protego: above 1 is better) and the goals; no
network.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from protego import Protego

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.parser._encoding import CANONICAL_HTTP_URL

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the tests' helpers: where the corpus is
    sys.path.insert(0, str(ROOT))

from tests.corpus import CORPUS, corpus_missing  # noqa: E402

AGENT = "ExampleBot"
LIMIT = 512_000  # what a crawl reads (RFC 9309 2.5: at least 500 KiB)
MIN_FILES = 20  # the largest files' band
FIRST_URL = "https://www.example.com/some/page.html"
GOALS = {"first": 3.0, "checks": 5.0, "memory": 0.4, "hostile": 20.0, "rotating": 2.0}
ROTATING = [f"Rotating{n}Bot/1.{n} (+https://example.com/bot{n})" for n in range(1000)]


def load_corpus() -> tuple[list[bytes], list[tuple[bytes, list[str]]]]:
    assert CORPUS is not None
    files = sorted(p for p in CORPUS.glob("*/*.txt") if p.parent.name != "urls")
    bodies = [path.read_bytes()[:LIMIT] for path in files]
    with_urls = []
    for url_file in sorted((CORPUS / "urls" / "anubhav_bench").glob("*.txt")):
        robots = CORPUS / "anubhav_bench" / url_file.name
        urls = [u for u in url_file.read_text(errors="replace").splitlines() if u.strip()]
        if robots.exists() and urls:
            with_urls.append((robots.read_bytes()[:LIMIT], urls))
    return bodies, with_urls


_RULE = re.compile(rb"^[ \t]*(?:dis)?allow[ \t]*:[ \t]*(/[^#\s]*)", re.IGNORECASE | re.MULTILINE)


def rule_urls(body: bytes, limit: int = 20) -> list[str]:
    """URLs a file's own rules name: each rule's literal text, and one octet more."""
    urls = []
    for value in _RULE.findall(body)[:limit]:
        path = value.decode("ascii", "ignore").rstrip("$").replace("*", "x")
        urls += ["https://www.example.com" + path, "https://www.example.com" + path + "z"]
    return urls or ["https://www.example.com/"]


def protego_parse(body: bytes) -> Protego:
    return Protego.parse(body.decode("utf-8", errors="ignore"))


def ours_first(body: bytes) -> bool:
    return RobotsTxt.parse(body).allowed(url=FIRST_URL, agent=AGENT)


def theirs_first(body: bytes) -> bool:
    return bool(protego_parse(body).can_fetch(FIRST_URL, AGENT))


@contextmanager
def gc_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _reps(body: bytes) -> int:
    """Calls per timing, so that one timing is well above the clock's cost."""
    return 20 if len(body) < 2_000 else 5 if len(body) < 20_000 else 1


def paired(
    rounds: int,
    items: list[object],
    ours: Callable[[object], object],
    theirs: Callable[[object], object],
    reps: Callable[[object], int] = lambda item: 1,
) -> tuple[list[float], list[float]]:
    """Per item, the least CPU time (``time.process_time``) per call of each
    parser over the rounds: the two take turns on each item, the first of the
    pair alternating from round to round, so machine drift and other
    processes' load fall on both alike."""
    best_ours = [float("inf")] * len(items)
    best_theirs = [float("inf")] * len(items)
    clock = time.process_time
    for round_ in range(rounds):
        for index, item in enumerate(items):
            count = reps(item)
            pair = ((ours, best_ours), (theirs, best_theirs))
            for call, best in pair if round_ % 2 == 0 else pair[::-1]:
                started = clock()
                for _ in range(count):
                    call(item)
                took = (clock() - started) / count
                if took < best[index]:
                    best[index] = took
    return best_ours, best_theirs


def best_of(
    rounds: int, ours: Callable[[], object], theirs: Callable[[], object]
) -> tuple[float, float]:
    """Least CPU time of each, alternating so both see the same machine state."""
    ours_times, theirs_times = [], []
    for _ in range(rounds):
        for call, times in ((ours, ours_times), (theirs, theirs_times)):
            started = time.process_time()
            call()
            times.append(time.process_time() - started)
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


def line(name: str, ours: float, theirs: float, unit: str, ratio: float, goal: str = "") -> None:
    print(
        f"{name:<46} ours {ours:>11,.1f} {unit:<9} protego {theirs:>11,.1f} {unit:<9} "
        f"ratio {ratio:>8.2f}x {goal}"
    )


def verdict(ratio: float, goal: float, higher: bool = True) -> str:
    met = ratio >= goal if higher else ratio <= goal
    return f"(goal {'>=' if higher else '<='} {goal}: {'met' if met else 'NOT met'})"


def bands(sizes: list[int]) -> list[tuple[str, list[int]]]:
    """Indexes of the files around the median, p90 and p99 file size, and of
    the largest files: ``(name, indexes)``, the corpus last."""
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    chosen = []
    for name, quantile, half in (("median", 0.5, 100), ("p90", 0.9, 100), ("p99", 0.99, 30)):
        at = int(quantile * (len(order) - 1))
        band = order[max(0, at - half) : at + half]
        low, high = sizes[band[0]], sizes[band[-1]]
        chosen.append((f"{name} size ({len(band)} files, {low:,}-{high:,} o)", band))
    chosen.append((f"largest ({20} files, {sizes[order[-20]]:,}+ o)", order[-20:]))
    chosen.append((f"corpus ({len(order):,} files)", order))
    return chosen


def by_band(
    title: str,
    sizes: list[int],
    ours: list[float],
    theirs: list[float],
    unit: str,
    scale: float,
    goal: float | None,
    per: list[int] | None = None,
) -> None:
    """Print, per size band, the median of the per-file ratios and the ratio
    of the totals, each beside the goal."""
    print(title)
    for name, band in bands(sizes):
        ratios = [theirs[i] / ours[i] for i in band if ours[i] > 0]
        median = statistics.median(ratios)
        ours_total, theirs_total = sum(ours[i] for i in band), sum(theirs[i] for i in band)
        count = sum(per[i] for i in band) if per is not None else len(band)
        line(
            f"  {name}",
            ours_total / count * scale,
            theirs_total / count * scale,
            unit,
            median,
            "" if goal is None else verdict(median, goal),
        )
        totals = theirs_total / ours_total
        print(
            f"{'    ratio of the totals':<46} {totals:.2f}x "
            + ("" if goal is None else verdict(totals, goal))
        )


def first_decision(bodies: list[bytes], rounds: int) -> None:
    items: list[object] = list(bodies)
    ours_f: Callable[[object], object] = ours_first  # type: ignore[assignment]
    theirs_f: Callable[[object], object] = theirs_first  # type: ignore[assignment]
    ours, theirs = paired(rounds, items, ours_f, theirs_f, _reps)  # type: ignore[arg-type]
    by_band(
        "first decision per site: parse + compile + one check, GC on, CPU time (median per file)",
        [len(b) for b in bodies],
        ours,
        theirs,
        "us/site",
        1e6,
        GOALS["first"],
    )


def checks(
    name: str, sites: list[tuple[bytes, list[str]]], rounds: int, floor: bool = False
) -> None:
    ours_parsed = [(RobotsTxt.parse(b), urls) for b, urls in sites]
    theirs_parsed = [(protego_parse(b), urls) for b, urls in sites]
    for robots, urls in ours_parsed:  # compiled, as after a crawl's first requests
        for url in (urls * 9)[:9]:  # past the first checks, which scan few rules
            robots.allowed(url=url, agent=AGENT)
    for parsed, urls in theirs_parsed:
        parsed.can_fetch(urls[0], AGENT)

    def ours_site(pair: object) -> None:
        robots, urls = pair  # type: ignore[misc]
        for url in urls:
            robots.allowed(url=url, agent=AGENT)

    def theirs_site(pair: object) -> None:
        parsed, urls = pair  # type: ignore[misc]
        for url in urls:
            parsed.can_fetch(url, AGENT)

    pairs = list(zip(ours_parsed, theirs_parsed, strict=True))
    ours, theirs = paired(
        rounds,
        pairs,  # type: ignore[arg-type]
        lambda p: ours_site(p[0]),  # type: ignore[index]
        lambda p: theirs_site(p[1]),  # type: ignore[index]
        lambda p: 3,
    )
    by_band(
        f"cached checks: {name}, CPU time (median per site)",
        [len(b) for b, _ in sites],
        ours,
        theirs,
        "us/check",
        1e6,
        GOALS["checks"],
        [len(urls) for _, urls in sites],
    )
    if floor:
        # The same sites, Protego against the least any check that reads the
        # URL's canonical path in Python can cost: where "ours" would stand
        # if the rest of a check were free.
        floors, theirs = paired(
            rounds,
            pairs,  # type: ignore[arg-type]
            lambda p: floor_site(p[0][1]),  # type: ignore[index]
            lambda p: theirs_site(p[1]),  # type: ignore[index]
            lambda p: 3,
        )
        by_band(
            f"cached checks: {name}, the floor of a check in Python (one call, the "
            "canonical-path regex, one prefix test) in the place of ours",
            [len(b) for b, _ in sites],
            floors,
            theirs,
            "us/check",
            1e6,
            GOALS["checks"],
            [len(urls) for _, urls in sites],
        )


_NO_PREFIX = ("/floor-of-a-check/",)


def check_floor(url: str, prefixes: tuple[str, ...] = _NO_PREFIX) -> bool:
    """The least a check that reads a URL's canonical path (RFC 9309 2.2.2)
    costs in Python: a call, the package's canonical-path regex (what every
    check of an http(s) URL runs first) and one prefix test; no agent, no
    rule. A check cannot cost less, so ``Protego / this`` is the most any
    pure-Python check reaches."""
    match = CANONICAL_HTTP_URL.match(url)
    path = url if match is None else match[1]
    return not path.startswith(prefixes)


def floor_site(urls: list[str]) -> None:
    for url in urls:
        check_floor(url)


def site_decisions(sites: list[tuple[bytes, list[str]]], rounds: int) -> None:
    """Parse, compile and the first ``count`` checks of each site's real
    URLs, against Protego's parse and as many ``can_fetch``."""
    for count in (16, 100):
        items: list[object] = [(body, (urls * count)[:count]) for body, urls in sites]

        def ours_site(item: object) -> None:
            body, urls = item  # type: ignore[misc]
            robots = RobotsTxt.parse(body)
            for url in urls:
                robots.allowed(url=url, agent=AGENT)

        def theirs_site(item: object) -> None:
            body, urls = item  # type: ignore[misc]
            parsed = protego_parse(body)
            for url in urls:
                parsed.can_fetch(url, AGENT)

        ours, theirs = paired(rounds, items, ours_site, theirs_site)
        by_band(
            f"a site's first {count} decisions: parse + compile + {count} checks of its real "
            "URLs, GC on, CPU time (median per site)",
            [len(body) for body, _ in sites],
            ours,
            theirs,
            "us/site",
            1e6,
            None,
        )


def memory(bodies: list[bytes]) -> None:
    def ours_kept(chosen: list[bytes]) -> list[object]:
        kept = []
        for body in chosen:
            robots = RobotsTxt.parse(bytes(bytearray(body)))  # a fresh body to keep or drop
            robots.allowed(url=FIRST_URL, agent=AGENT)
            kept.append(robots)
        return kept

    def theirs_kept(chosen: list[bytes]) -> list[object]:
        kept = []
        for body in chosen:
            parsed = protego_parse(bytes(bytearray(body)))
            parsed.can_fetch(FIRST_URL, AGENT)
            kept.append(parsed)
        return kept

    def compact_kept(chosen: list[bytes]) -> list[object]:
        from scrapy_rfc9309.parser._compact import CompactRobots

        kept = []
        for body in chosen:
            robots = RobotsTxt.parse(bytes(bytearray(body)))
            robots.allowed(url=FIRST_URL, agent=AGENT)
            kept.append(None if robots.allows_everything else CompactRobots(robots))
        return kept

    # Once-per-process allocations are no file's: both parsers read the
    # corpus first, kept by neither, so that the standard library's bounded
    # caches (``urllib.parse.urlsplit``'s, for one) are as full as in a long
    # crawl, where a new entry evicts an old one. Without this, the first
    # band measured counts them in Protego's share (6.5 against 6.2 KB a
    # median file).
    theirs_kept(bodies)
    ours_kept(bodies[::20])
    print("memory retained after one check, body counted (tracemalloc; share of Protego's)")
    for name, band in bands([len(b) for b in bodies]):
        chosen = [bodies[i] for i in band]
        theirs_kb = retained_bytes(lambda c=chosen: theirs_kept(c)) / len(chosen) / 1e3
        ours_kb = retained_bytes(lambda c=chosen: ours_kept(c)) / len(chosen) / 1e3
        share = ours_kb / theirs_kb
        print(
            f"  {name:<44} ours {ours_kb:>11,.1f} KB/file   "
            f"protego {theirs_kb:>11,.1f} KB/file   share {share:>8.3f} "
            + verdict(share, GOALS["memory"], higher=False)
        )
    compact_kb = retained_bytes(lambda: compact_kept(bodies)) / len(bodies) / 1e3
    print(f"{'  corpus, as the site cache keeps it':<46} ours {compact_kb:>11,.1f} KB/file")


def rotating(bodies: list[bytes], rounds: int) -> None:
    from scrapy_rfc9309.parser._compact import CompactRobots

    largest = sorted(bodies, key=len)[-20:]
    url = FIRST_URL
    ours, theirs = [], []
    for body in largest:
        robots = RobotsTxt.parse(body)
        robots.allowed(url=url, agent=AGENT)
        ours.append(CompactRobots(robots))
        parsed = protego_parse(body)
        parsed.can_fetch(url, AGENT)
        theirs.append(parsed)

    def ours_rotating() -> None:
        for robots in ours:
            for agent in ROTATING:
                robots.allowed(url=url, agent=agent)

    def theirs_rotating() -> None:
        for parsed in theirs:
            for agent in ROTATING:
                parsed.can_fetch(url, agent)

    def ours_one_agent() -> None:
        agent = ROTATING[0]
        for robots in ours:
            for _ in ROTATING:
                robots.allowed(url=url, agent=agent)

    checks = len(ours) * len(ROTATING)
    ours_t, theirs_t = best_of(rounds, ours_rotating, theirs_rotating)
    one_t, _ = best_of(rounds, ours_one_agent, lambda: None)
    print(f"1,000 rotating User-Agents, 20 largest files, site cache form ({checks:,} checks)")
    line(
        "  check, a new User-Agent each time",
        ours_t / checks * 1e6,
        theirs_t / checks * 1e6,
        "us/check",
        theirs_t / ours_t,
    )
    print(
        f"{'  the same, one User-Agent':<46} ours {one_t / checks * 1e6:>11,.1f} us/check  "
        f"rotating / one {ours_t / one_t:>8.2f}  "
        + verdict(ours_t / one_t, GOALS["rotating"], higher=False)
        + " (an unseen agent costs a look-up, no parse)"
    )


def hostile_files() -> dict[str, tuple[bytes, list[str]]]:
    rng = random.Random(9309)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    def cut(text: str) -> bytes:
        body = text.encode()[:LIMIT]
        return body[: body.rfind(b"\n") + 1]

    words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(25_000)]
    long_pieces = cut("User-agent: *\n" + "".join(f"Disallow: /*{w}*.php$\n" for w in words))

    def piece() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.choice((1, 2))))

    short_rules = [
        "/*" + "*".join(piece() for _ in range(rng.choice((2, 3, 4)))) + rng.choice(("", "$"))
        for _ in range(25_000)
    ]
    short_pieces = cut("User-agent: *\n" + "".join(f"Disallow: {r}\n" for r in short_rules))
    paths = [
        "/"
        + "/".join(
            "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 10)))
            for _ in range(rng.randint(2, 5))
        )
        + rng.choice(("", ".html", "?q=1"))
        for _ in range(200)
    ]
    names = ["".join(rng.choice("abcdefgh") for _ in range(10)) for _ in range(2000)]
    agents = "".join(f"User-agent: bot-{name}\n" for name in names)
    rules = "".join(f"Disallow: /p{i}/\n" for i in range(2000))
    # Worst case we know for a compiled check: the path holds every 1-2 octet
    # piece (a de Bruijn sequence), so every rule the compiled index keys by
    # a piece is a candidate, and each fails only at its anchored end (the
    # path ends "~"). The first checks' index keys these rules by their end,
    # which no path but one of that end looks up.
    worst_rules = [
        "/*" + "*".join(piece() for _ in range(rng.choice((2, 3)))) + "$" for _ in range(25_000)
    ]
    worst = cut("User-agent: *\n" + "".join(f"Disallow: {r}\n" for r in worst_rules))
    de_bruijn = "/" + "".join(a + b for a in alphabet for b in alphabet) + "~"
    # Worst case we know for the first checks' index: rules anchored on the
    # path's last two octets are all candidates, and each fails at its first
    # piece, which the path lacks (a search of the whole path). Past 1,024
    # rules under one end they are keyed by a piece, so 25 ends of 1,000.
    absent = "bcdefghij"
    anchored_rules = [
        "/*"
        + "*".join(rng.choice(absent) + rng.choice(absent) for _ in range(rng.choice((1, 2))))
        + f"*z{'abcdefghijklmnopqrstuvwxy'[number % 25]}$"
        for number in range(25_000)
    ]
    anchored = cut("User-agent: *\n" + "".join(f"Disallow: {r}\n" for r in anchored_rules))
    tail_path = "/" + "".join(rng.choice("klmnopqrstuvwxy0123456789") for _ in range(1000)) + "za"
    # One line over and over: every copy a candidate of a path that holds its
    # pieces, each failing at the end (linear in the rules, as every check of
    # Protego is).
    repeated = cut("User-agent: *\n" + "Disallow: /*zz*zz$\n" * 40_000)
    # A "$" inside a rule is a literal octet (RFC 9309 2.2.3), which no key of
    # the first checks' index holds: such files are compiled at once.
    dollars = cut("User-agent: *\n" + "".join(f"Disallow: /*$x{n % 97}\n" for n in range(40_000)))
    # Every rule shares its longest piece and differs after it: keyed by
    # that piece, a path holding it would make every rule a candidate; past
    # 1,024 rules under one key they are keyed again by their least shared
    # piece (``_spread``), here 3 octets of the number.
    shared_piece = cut(
        "User-agent: *\n" + "".join(f"Disallow: /*abcdefgh*q{n}\n" for n in range(40_000))
    )

    # Worst case we know for keying again: every 3 octets of every piece
    # are shared (pieces of two letters, 8 such strings), so a path that
    # holds them all makes most rules candidates, each failing at its last
    # piece (linear in the rules, as Protego's check).
    def two_letters(number: int) -> str:
        return "".join("xy"[number >> bit & 1] for bit in range(14))

    two_letter_pieces = cut(
        "User-agent: *\n"
        + "".join(f"Disallow: /*abcdefgh*{two_letters(n)}\n" for n in range(40_000))
    )
    # The same under a piece that starts with "/" (``/ab``), as a literal
    # prefix may: the rules there by a piece are keyed again, not those
    # there by their prefix.
    slash_piece = cut(
        "User-agent: *\n" + "".join(f"Disallow: /*/abcdefgh*q{n}\n" for n in range(40_000))
    )
    # Rules under a rare key (``zqx``) that all but one also hold a string
    # common in paths (``htm``): keyed again there, every ``.htm`` path
    # would try them all; keying again never makes a bucket of more than
    # 1,024 rules, so they stay under ``zqx``.
    rare_key = cut(
        "User-agent: *\nDisallow: /*zqx*a\n"
        + "".join(
            "Disallow: /*zqx*htm*" + "*".join(rng.choice(alphabet) for _ in range(7)) + "\n"
            for _ in range(20_000)
        )
    )
    # Rules under a string common in paths (``htm``) whose least shared
    # pieces (15 such as ``qzk``) are held by about 1,300 rules each: keyed
    # again only if a bucket of more than 1,024 rules may be made, at most
    # half the one it splits; kept under ``htm``, ``/index.htm`` would try
    # all of them.
    common_key = cut(
        "User-agent: *\n"
        + "".join(
            f"Disallow: /*htm*q{rng.choice('zjxy')}{rng.choice('kvw')}*"
            + "*".join(rng.choice(alphabet[:26]) for _ in range(3))
            + "\n"
            for _ in range(25_000)
        )
    )
    return {
        "20,000 wildcard rules, 8-octet pieces": (long_pieces, paths),
        "20,000 wildcard rules, 1-2 octet pieces": (short_pieces, paths),
        "2,000 agents x 2,000 rules": ((agents + rules).encode(), paths),
        "worst case: every rule a candidate": (worst, [de_bruijn] * 20),
        "worst case: 1,000 rules candidates by their anchored end": (anchored, [tail_path] * 20),
        "worst case: one line over and over": (repeated, ["/a/zzz"] * 20),
        "a literal $ inside every rule": (dollars, paths),
        "rules sharing their longest piece, keyed again": (shared_piece, ["/abcdefgh"] * 20),
        "rules sharing a piece that starts with /, keyed again": (slash_piece, ["/abcdefgh"] * 20),
        "rules under a rare key, all holding a string common in paths": (
            rare_key,
            ["/index.htm", "/a/b/page.htm", "/x.htm?q=1"] * 7,
        ),
        "rules under a string common in paths, split by pieces 1,300 rules hold": (
            common_key,
            ["/index.htm", "/a/b/page.html", "/products?id=3"] * 7,
        ),
        "worst case: every 3 octets of every piece shared": (
            two_letter_pieces,
            ["/abcdefgh/xxxyyyxyxyxxyyx"] * 20,
        ),
    }


def hostile(rounds: int) -> None:
    for name, (body, paths) in hostile_files().items():
        rules = body.count(b"\n") - 1
        print(f"{name}: {len(body):,} octets, {rules:,} lines")

        def ours_whole(b: bytes = body, p: list[str] = paths) -> None:
            robots = RobotsTxt.parse(b)
            for path in p[:20]:
                robots.allowed(url=path, agent="bot")

        def theirs_whole(b: bytes = body, p: list[str] = paths) -> None:
            parsed = protego_parse(b)
            for path in p[:20]:
                parsed.can_fetch(path, "bot")

        ours_t, theirs_t = best_of(rounds, ours_whole, theirs_whole)
        goal = verdict(theirs_t / ours_t, GOALS["hostile"]) if "wildcard" in name else ""
        line(
            "  parse + compile + 20 checks",
            ours_t * 1e3,
            theirs_t * 1e3,
            "ms",
            theirs_t / ours_t,
            goal,
        )
        ours_robots, theirs_robots = RobotsTxt.parse(body), protego_parse(body)
        for path in (paths * 40)[:40]:  # past the first checks' index: compiled
            ours_robots.allowed(url=path, agent="bot")
        ours_t, theirs_t = best_of(
            rounds,
            lambda r=ours_robots, p=paths: [r.allowed(url=u, agent="bot") for u in p],
            lambda r=theirs_robots, p=paths: [r.can_fetch(u, "bot") for u in p],
        )
        goal = verdict(theirs_t / ours_t, GOALS["hostile"]) if "wildcard" in name else ""
        line(
            "  check",
            ours_t / len(paths) * 1e6,
            theirs_t / len(paths) * 1e6,
            "us/check",
            theirs_t / ours_t,
            goal,
        )


PARTS = ("first", "checks", "sites", "memory", "rotating", "hostile")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    args = parser.parse_args()
    if (missing := corpus_missing()) is not None:
        print(missing, file=sys.stderr)
        return 2
    bodies, with_urls = load_corpus()
    if len(bodies) < MIN_FILES or not with_urls:
        print(
            f"the corpus at {CORPUS} has {len(bodies)} robots.txt files and "
            f"{len(with_urls)} sites with URL lists (urls/anubhav_bench/): the bands need "
            f"at least {MIN_FILES} files, and the checks some URL lists",
            file=sys.stderr,
        )
        return 2
    url_count = sum(len(urls) for _, urls in with_urls)
    print(
        f"corpus: {len(bodies)} files, {sum(map(len, bodies)) / 1e6:.1f} MB read "
        f"(each cut at {LIMIT:,} octets); {len(with_urls)} sites with {url_count} real URLs"
    )
    print(
        f"python {sys.version.split()[0]}, rounds {args.rounds} (least CPU time of each), "
        f"GC on, load average {os.getloadavg()[0]:.1f}\n"
    )
    if "first" in args.parts:
        first_decision(bodies, args.rounds)
        print()
    if "checks" in args.parts:
        checks("real URLs", with_urls, args.rounds, floor=True)
        checks("URLs from each file's rules", [(b, rule_urls(b)) for b in bodies], args.rounds)
        agreements = 0
        for body, urls in with_urls:
            ours, theirs = RobotsTxt.parse(body), protego_parse(body)
            agreements += sum(
                ours.allowed(url=url, agent=AGENT) == theirs.can_fetch(url, AGENT) for url in urls
            )
        print(f"{'(verdicts equal to Protego on real URLs)':<46} {agreements / url_count:.2%}\n")
    if "sites" in args.parts:
        site_decisions(with_urls, args.rounds)
        print()
    if "memory" in args.parts:
        memory(bodies)
        print()
    if "rotating" in args.parts:
        rotating(bodies, args.rounds)
        print()
    if "hostile" in args.parts:
        hostile(max(1, args.rounds - 1))
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

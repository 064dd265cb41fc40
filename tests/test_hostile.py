"""Hostile input: huge, binary, pathological files never raise and never take
super-linear time (RFC 9309 section 3: parsers must protect themselves).

The time limits are generous guards (seconds where quadratic or exponential
behaviour would take minutes), not benchmarks; see ``benchmarks/``."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from scrapy_rfc9309 import RobotsTxt

T = TypeVar("T")


def timed(limit: float, call: Callable[[], T]) -> T:
    """``call()``, asserting it took under ``limit`` s of this process's CPU time
    (not wall time: other processes on a loaded machine do not count in it)."""
    started = time.process_time()
    result = call()
    elapsed = time.process_time() - started
    assert elapsed < limit, f"took {elapsed:.2f}s, limit {limit}s"
    return result


def test_3_many_agents_share_one_group_without_copies() -> None:
    names = ["bot-" + "".join(chr(97 + int(digit)) for digit in str(i)) for i in range(2000)]
    agents = "".join(f"User-agent: {name}\n" for name in names)
    rules = "".join(f"Disallow: /p{i}/\n" for i in range(2000))
    robots = timed(2.0, lambda: RobotsTxt.parse(agents + rules))
    assert robots.warnings == ()
    assert len(robots.groups_for(names[0])) == 1
    assert robots.groups_for(names[0])[0] is robots.groups_for(names[-1])[0]
    assert len(robots.groups_for(names[0])[0].rule_lines) == 2000
    assert not robots.allowed(url="/p1999/x", agent=names[-1].upper())
    assert robots.allowed(url="/p1999/x", agent="other")


def test_3_stars_do_not_backtrack() -> None:
    body = "User-agent: *\nDisallow: /" + "*a" * 20_000 + "*b$\n"
    robots = timed(2.0, lambda: RobotsTxt.parse(body))
    timed(2.0, lambda: robots.allowed(url="/" + "a" * 50_000, agent="x"))
    assert not robots.allowed(url="/" + "a" * 20_000 + "b", agent="x")
    body = "User-agent: *\nDisallow: /" + "*" * 100_000 + "\n"
    robots = timed(2.0, lambda: RobotsTxt.parse(body))
    assert not timed(1.0, lambda: robots.allowed(url="/x" * 10_000, agent="x"))


def test_3_twenty_thousand_wildcard_rules() -> None:
    rng = random.Random(9309)
    words = ["".join(rng.choice("abcdefghij") for _ in range(6)) for _ in range(20_000)]
    body = "User-agent: *\n" + "".join(f"Disallow: /*{word}*.php$\n" for word in words)
    robots = timed(5.0, lambda: RobotsTxt.parse(body))
    url = f"/shop/{words[12345]}/item.php"
    assert not robots.allowed(url=url, agent="x")
    assert robots.check(url=url, agent="x").line == 12345 + 2
    timed(
        2.0, lambda: [robots.allowed(url=f"/shop/{w}x/item.html", agent="x") for w in words[:1000]]
    )


def test_3_binary_junk_and_huge_bodies() -> None:
    rng = random.Random(3)
    junk = bytes(rng.getrandbits(8) for _ in range(600_000))
    robots = timed(5.0, lambda: RobotsTxt.parse(junk))
    assert robots.truncated
    assert isinstance(robots.allowed(url="/x", agent="x"), bool)
    one_line = b"User-agent: *\nDisallow: /" + b"a" * 3_000_000
    robots = timed(5.0, lambda: RobotsTxt.parse(one_line))
    assert robots.allowed(url="/aaa", agent="x")  # the cut line is dropped
    only_newlines = b"\n" * 3_000_000
    assert timed(5.0, lambda: RobotsTxt.parse(only_newlines)).allowed(url="/", agent="x")


def test_3_long_urls_and_escapes() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /a%\nAllow: /%zz\n")
    url = "/" + "%" * 100_000 + "é" * 10_000
    assert isinstance(timed(2.0, lambda: robots.allowed(url=url, agent="x")), bool)
    assert not robots.allowed(url="/a%", agent="x")
    assert robots.allowed(url="/%zz", agent="x")


def test_3_twenty_thousand_wildcards_with_one_or_two_octet_pieces() -> None:
    """Rules like ``/*x*y*z`` have no 3-octet piece to index by: indexed by
    their longest piece and split into pieces only when first tried."""
    rng = random.Random(9309)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

    def piece() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.choice((1, 2))))

    rules = [
        "/*" + "*".join(piece() for _ in range(rng.choice((2, 3, 4)))) + rng.choice(("", "$"))
        for _ in range(20_000)
    ]
    body = "User-agent: *\n" + "".join(f"Disallow: {rule}\n" for rule in rules)
    robots = timed(10.0, lambda: RobotsTxt.parse(body))
    robots.allowed(url="/", agent="x")
    paths = ["/" + "".join(rng.choice(alphabet + "/") for _ in range(40)) for _ in range(100)]
    verdicts = timed(10.0, lambda: [robots.check(url=path, agent="x") for path in paths])
    for path, verdict in zip(paths[:10], verdicts, strict=False):
        if verdict.rule is not None:  # the deciding rule matches the path
            pattern = verdict.rule.split(": ", 1)[1]
            single = RobotsTxt.parse(f"User-agent: *\nDisallow: {pattern}\n")
            assert not single.allowed(url=path, agent="x")


def test_the_keys_and_agents_remembered_across_files_are_bounded() -> None:
    """A stream of files of ever new keys and agents ("X-1: a", "User-agent:
    bot-1") fills the readings remembered across files only up to their
    bound, where they are emptied; each is read as before, with the same
    warnings, and a later file's keys are remembered again."""
    from scrapy_rfc9309.parser import _groups, _lines
    from scrapy_rfc9309.parser._groups import group_all
    from scrapy_rfc9309.parser._lines import Warnings

    for start in range(0, 10_000, 2_500):
        body = "".join(
            f"User-agent: bot-{n}\nX-{n}: a\nDisallow: /{n}\n" for n in range(start, start + 2_500)
        ).encode()
        collector = Warnings(limit=10_000)
        grouping = group_all(body, collector)
        assert len(grouping.groups) == 2_500
        last = f"unknown directive 'X-{start + 2_499}' ignored"
        assert collector.items[-1] == (3 * 2_500 - 1, last)
    assert len(_lines._READINGS) <= _lines._READINGS_KEPT
    assert len(_groups._PLAIN_AGENTS) <= _groups._AGENTS_KEPT
    # Filled with junk, they are emptied, not closed to what comes next.
    for _ in range(2):
        group_all(b"User-agent: Googlebot\nHost: example.com\n", Warnings())
    assert b"Host" in _lines._READINGS and b"Googlebot" in _groups._PLAIN_AGENTS

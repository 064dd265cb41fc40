"""Every real-world robots.txt of ``../shared/corpus`` parses and answers
without raising, in time proportional to its size (RFC 9309 2.5: parse
what can be parsed)."""

from __future__ import annotations

import time

import pytest

from scrapy_rfc9309 import RobotsTxt

from .corpus import SKIP_REASON, corpus_files

FILES = corpus_files()
pytestmark = pytest.mark.skipif(not FILES, reason=SKIP_REASON)

# A generous guard against super-linear behaviour, not a benchmark:
# fixed overhead plus 2 microseconds per parsed byte.
_SECONDS_PER_BYTE = 2e-6
_OVERHEAD = 0.05


def test_corpus_is_complete() -> None:
    assert len(FILES) == 6073


def _parse_and_answer(body: bytes) -> float:
    started = time.perf_counter()
    robots = RobotsTxt.parse(body)
    for agent in ("ExampleBot", "Googlebot", "*"):
        for url in ("/", "/index.html", "/search?q=1", "/a/b/c.php", "/%E3%83%84"):
            assert isinstance(robots.allowed(url=url, agent=agent), bool)
    return time.perf_counter() - started


def test_every_corpus_file_parses_and_answers() -> None:
    slow = []
    for path in FILES:
        body = path.read_bytes()
        bound = _OVERHEAD + _SECONDS_PER_BYTE * min(len(body), 512_000)
        elapsed = _parse_and_answer(body)
        if elapsed > bound:  # a pause of the machine does not repeat; super-linear time does
            elapsed = min(_parse_and_answer(body) for _ in range(3))
        if elapsed > bound:
            slow.append((path.name, len(body), round(elapsed, 3)))
    assert not slow, f"parse time not proportional to size: {slow[:10]}"

"""Property tests: no input raises, and matching agrees with a small,
obviously correct reference matcher (RFC 9309 2.2.2, 2.2.3)."""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rfc9309 import RobotsTxt


@given(body=st.binary(max_size=2000), url=st.text(max_size=60), agent=st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_arbitrary_bytes_urls_and_agents_never_crash(body: bytes, url: str, agent: str) -> None:
    robots = RobotsTxt.parse(body)
    try:
        verdict = robots.check(url="/" + url, agent=agent)
    except ValueError as error:  # only for agents that look like URLs (swapped arguments)
        assert "looks like a URL" in str(error)
    else:
        assert isinstance(verdict.allowed, bool)
    assert isinstance(robots.warnings, tuple)
    robots.crawl_delay("x")


@given(body=st.text(alphabet="uUser-agent:*Dislow/ab$#%2A\r\n\t \x00é", max_size=300))
@settings(max_examples=300, deadline=None)
def test_robots_like_text_never_crashes(body: str) -> None:
    robots = RobotsTxt.parse(body)
    for url in ("/", "/a", "/ab$", "/%2A", "https://h/é"):
        robots.check(url=url, agent="a")


def _reference_match(pattern: str, path: str) -> bool:
    """Naive recursive glob: ``*`` any run, final ``$`` end, else prefix match."""
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(pattern):
            return not anchored or j == len(path)
        if pattern[i] == "*":
            return any(match(i + 1, k) for k in range(j, len(path) + 1))
        return j < len(path) and path[j] == pattern[i] and match(i + 1, j + 1)

    return match(0, 0)


def _reference_allowed(rules: list[tuple[bool, str]], path: str) -> bool:
    best: tuple[int, bool] | None = None
    for allow, pattern in rules:
        if pattern and _reference_match(pattern, path):
            candidate = (len(pattern), allow)
            if best is None or candidate > best:
                best = candidate
    return True if best is None else best[1]


_PATTERN = st.text(alphabet="/ab*$", max_size=8).map(lambda s: "/" + s)
_PATH = st.text(alphabet="/ab$", max_size=10).map(lambda s: "/" + s)


@given(
    rules=st.lists(st.tuples(st.booleans(), _PATTERN), max_size=8),
    paths=st.lists(_PATH, max_size=8),
)
@settings(max_examples=500, deadline=None)
def test_matching_agrees_with_reference(rules: list[tuple[bool, str]], paths: list[str]) -> None:
    body = "user-agent: *\n" + "".join(
        f"{'allow' if allow else 'disallow'}: {pattern}\n" for allow, pattern in rules
    )
    robots = RobotsTxt.parse(body)
    for path in paths:
        if path == "/robots.txt":
            continue
        assert robots.allowed(url=path, agent="a") is _reference_allowed(rules, path), (body, path)


@given(
    patterns=st.lists(st.text(alphabet="/abc", min_size=1, max_size=6), max_size=40),
    paths=st.lists(st.text(alphabet="/abc", max_size=8), max_size=10),
)
@settings(max_examples=400, deadline=None)
def test_2_2_2_compact_prefix_index_agrees_with_the_dict(
    patterns: list[str], paths: list[str]
) -> None:
    from scrapy_rfc9309._prefixes import DictPrefixes, SortedPrefixes
    from scrapy_rfc9309._rulekey import pack

    table = {
        pattern: pack(len(pattern), i % 2 == 0, i + 1, i) for i, pattern in enumerate(patterns)
    }
    fast, compact = DictPrefixes(table), SortedPrefixes(table)
    for path in paths:
        assert fast.longest(path) == compact.longest(path), (table, path)

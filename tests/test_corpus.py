"""Every real-world robots.txt of the corpus (``$ROBOTSTXT_CORPUS``) parses and answers
without raising, in time proportional to its size (RFC 9309 2.5: parse
what can be parsed)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable

import pytest

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.parser import ResolvedVerdict

from .corpus import CORPUS, SKIP_REASON, corpus_files, corpus_sample

FILES = corpus_files()
if CORPUS is not None and not FILES:  # named, but wrong: said, not skipped
    pytest.fail(f"ROBOTSTXT_CORPUS: {SKIP_REASON}", pytrace=False)
#: the costly per-file checks' files (see :mod:`.corpus`)
SAMPLE = corpus_sample(FILES)
#: ... with the largest files, where the time per size is checked
SAMPLE_AND_LARGEST = corpus_sample(FILES, largest=25)
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
    for path in SAMPLE_AND_LARGEST:
        body = path.read_bytes()
        bound = _OVERHEAD + _SECONDS_PER_BYTE * min(len(body), 512_000)
        elapsed = _parse_and_answer(body)
        if elapsed > bound:  # a pause of the machine does not repeat; super-linear time does
            elapsed = min(_parse_and_answer(body) for _ in range(3))
        if elapsed > bound:
            slow.append((path.name, len(body), round(elapsed, 3)))
    assert not slow, f"parse time not proportional to size: {slow[:10]}"


# -- against Google's reference parser (optional: pip install fast-robotstxt) --


def _google() -> Callable[[bytes, str, str], bool] | None:
    try:
        from robotstxt import robots as google  # fast-robotstxt's bindings
    except ImportError:
        return None
    matcher = google.RobotsMatcher()

    def allowed(body: bytes, agent: str, url: str) -> bool:
        agent_bytes, url_bytes = agent.encode(), url.encode()
        return bool(
            google._lib.robots_allowed_by_robots(
                matcher._ptr,
                body,
                len(body),
                agent_bytes,
                len(agent_bytes),
                url_bytes,
                len(url_bytes),
            )
        )

    return allowed


def _documented_difference(robots: RobotsTxt, url: str, agent: str) -> bool:
    """The differences from Google's parser listed in the documentation (docs/parser.md), each where
    we follow RFC 9309 or a documented lenient reading."""
    verdict = robots.check(url=url, agent=agent)
    if url.endswith("/robots.txt"):
        return verdict.allowed  # RFC 9309 2.2.2: /robots.txt is always allowed
    if isinstance(verdict, ResolvedVerdict):
        # LENIENT(dot-segments): denied as the server resolves the path
        # (``//x`` -> ``/x``), where Google reads the path only as sent
        return not verdict.allowed
    if verdict.rule is None:
        return False
    value = verdict.rule.split(":", 1)[1].strip()
    if not value.startswith(("/", "*")):
        return True  # LENIENT(rule-without-slash), LENIENT(rule-url)
    if "\\" in url:
        return True  # Google's URL parser turns "\" into "/"
    # Google-specific: "Allow: /x/index.htm*" also allows "/x/".
    body = robots.body.decode("utf-8", "replace").lower()
    return not verdict.allowed and url.endswith("/") and "/index.htm" in body


def test_verdicts_agree_with_googles_parser_on_real_urls() -> None:
    google = _google()
    if google is None:
        if os.environ.get("CI"):
            pytest.fail("Google's reference parser is not installed: the tests extra has it")
        pytest.skip("Google's reference parser is not installed (pip install fast-robotstxt)")
    url_dir = FILES[0].parents[1] / "urls" / "anubhav_bench"
    differences = []
    for url_file in corpus_sample(sorted(url_dir.glob("*.txt"))):
        body = (url_dir.parent.parent / "anubhav_bench" / url_file.name).read_bytes()[:512_000]
        urls = [url for url in url_file.read_text(errors="replace").splitlines() if url.strip()]
        robots = RobotsTxt.parse(body)
        for agent in ("ExampleBot", "Googlebot"):
            for url in urls:
                ours = robots.allowed(url=url, agent=agent)
                if ours != google(body, agent, url) and not _documented_difference(
                    robots, url, agent
                ):
                    differences.append((url_file.name, agent, url, ours))
    assert not differences, differences[:20]


def test_files_that_say_go_away_disallow_everything_as_google_reads_them() -> None:
    """``Disallow: *`` (RFC 9309 2.2.3: a ``*`` matches any run of octets,
    the empty one included) in the real files that say it."""
    google = _google()
    found = 0
    for path in FILES:
        body = path.read_bytes()[:512_000]
        if not _GO_AWAY.search(body):
            continue
        robots = RobotsTxt.parse(body)
        for group in robots._groups().groups:
            if not group.agents or not group.agents[0][1]:
                continue
            agent = group.agents[0][1]
            agent = "ExampleBot" if agent == "*" else agent
            verdict = robots.check(url="/some/page", agent=agent)
            if verdict.rule is not None and _GO_AWAY.fullmatch(verdict.rule.encode()):
                found += 1
                assert not robots.allowed(url="/", agent=agent)
                if google is not None and agent.isascii():
                    assert not google(body, agent, "https://example.com/some/page"), path
    assert found >= 30, found


_GO_AWAY = re.compile(rb"(?im)^disallow[ \t]*:[ \t]*\*[ \t]*$")


_RULE_VALUE = re.compile(rb"(?im)^[ \t]*(?:dis)?allow[ \t]*:[ \t]*(/[^#\s]*)")


def test_2_2_2_every_shortcut_agrees_with_the_compiled_index_on_every_corpus_file() -> None:
    """The first checks by scan and the disallow-prefix shortcut give the
    verdicts of the fully compiled index, on each file's own rules' URLs."""
    from scrapy_rfc9309.parser._encoding import canonical_path
    from scrapy_rfc9309.parser._matcher import AgentMatcher
    from scrapy_rfc9309.parser._steps import run_to_end

    differences: list[tuple[str, ...]] = []
    for path in SAMPLE:
        body = path.read_bytes()[:512_000]
        urls = ["/", "/index.html", "/search?q=1", "/%E3%83%84", "/wp-admin/admin-ajax.php"]
        for value in _RULE_VALUE.findall(body)[:20]:
            text = value.decode("utf-8", "replace").rstrip("$").replace("*", "x")
            urls += [text, text + "z"]
        robots = RobotsTxt.parse(body)
        for agent in ("ExampleBot", "Googlebot"):
            compiled = run_to_end(
                AgentMatcher.compile_steps(robots._rules(robots._group_token(agent)))
            )
            for url in urls:
                canonical = canonical_path(url)
                rule = None if canonical == "/robots.txt" else compiled.decide(canonical)
                expected = rule is None or (rule >> 63) & 1 == 1
                if robots.allowed(url=url, agent=agent) != expected:
                    differences.append((path.name, agent, url))
                verdict = robots.check(url=url, agent=agent)
                if verdict.allowed != expected:
                    differences.append((path.name, agent, url, "check"))
    assert not differences, differences[:20]


def test_2_2_every_corpus_file_groups_as_the_line_by_line_reference() -> None:
    from scrapy_rfc9309.parser._lines import Warnings, prepare

    from .reference import assert_same_grouping

    for path in SAMPLE:
        body, _ = prepare(path.read_bytes(), 512_000, Warnings())
        assert_same_grouping(body)


def test_2_2_what_a_parsed_file_reads_again_after_a_check_is_what_it_read_first() -> None:
    """Once a matcher is compiled the groups, sitemaps and warnings are
    dropped and read again from the body on demand: the same values."""
    for path in SAMPLE[::3]:
        body = path.read_bytes()
        first = RobotsTxt.parse(body)
        expected = (
            first.warnings,
            first.sitemaps,
            first.allows_everything,
            first.tokens,
            [first.groups_for(agent) for agent in ("ExampleBot", "Googlebot", "*")],
            [first.crawl_delay(agent) for agent in ("ExampleBot", "Googlebot")],
        )
        checked = RobotsTxt.parse(body)
        checked.allowed(url="/", agent="ExampleBot")
        assert checked._grouping is None
        got = (
            checked.warnings,
            checked.sitemaps,
            checked.allows_everything,
            checked.tokens,
            [checked.groups_for(agent) for agent in ("ExampleBot", "Googlebot", "*")],
            [checked.crawl_delay(agent) for agent in ("ExampleBot", "Googlebot")],
        )
        assert got == expected, path.name
        checked.allowed(url="/", agent="Googlebot")  # another agent: read again, compiled
        assert checked.allowed(url="/a", agent="Googlebot") == first.allowed(
            url="/a", agent="Googlebot"
        )

"""Deliberate departures from the RFC 9309 grammar (RFC 9309 2.2.4 allows
leniency for other records; the rest keeps real-world files working).

Each departure is tagged ``LENIENT(<id>)`` in the source, is tested here under
test id ``lenient-<id>``, and produces a warning naming its line.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import cast

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

import scrapy_rfc9309
from scrapy_rfc9309 import RobotsTxt

from .conftest import crawl
from .server import text

param = pytest.param

# (id, body, url, expected verdict for agent "ExampleBot", line of the warning)
LENIENT_CASES = [
    param(b"user-agent: *\nDissallow: /tmp\n", "/tmp/a", False, 2, id="lenient-misspelling"),
    param(b"useragent: *\ndisallow: /tmp\n", "/tmp/a", False, 1, id="lenient-misspelling-ua"),
    param(b"user agent: *\ndisallow: /tmp\n", "/tmp/a", False, 1, id="lenient-misspelling-ua2"),
    param(b"user-agent: *\nDisallow /tmp\n", "/tmp/a", False, 2, id="lenient-missing-colon"),
    param(b"\xef\xbb\xbfuser-agent: *\ndisallow: /tmp\n", "/tmp", False, 1, id="lenient-bom"),
    param(
        b"user-agent: *\nallow: /\xe9\ndisallow: /\n", "/%E9", True, 2, id="lenient-invalid-utf8"
    ),
    param(
        b"user-agent: *\nallow: /\xe9\ndisallow: /\n",
        "/x",
        False,
        2,
        id="lenient-invalid-utf8-kept",
    ),
    param(b"u\x00s\x00e\x00r\x00-agent: *\ndisallow: /x\n", "/x", False, 1, id="lenient-nul"),
    param(
        b"user-agent: *\ndisallow: private/\n",
        "/private/a",
        False,
        2,
        id="lenient-rule-without-slash",
    ),
    param(b"user-agent: ExampleBot/2.1\ndisallow: /x\n", "/x", False, 1, id="lenient-agent-suffix"),
    param(b"user-agent: ExampleBot*\ndisallow: /x\n", "/x", False, 1, id="lenient-agent-glob"),
    param(
        b"user-agent: *\ndisallow: https://www.example.com/shop/\n",
        "https://www.example.com/shop/item",
        False,
        2,
        id="lenient-rule-url",
    ),
    param(
        "\ufeffuser-agent: *\r\ndisallow: /x\r\n".encode("utf-16-le"),
        "/x",
        False,
        1,
        id="lenient-utf16-bom",
    ),
    param(
        "\ufeffuser-agent: *\ndisallow: /x\n".encode("utf-16-be"),
        "/x",
        False,
        1,
        id="lenient-utf16-bom-be",
    ),
]


#: Page-level directives (robots META tag, X-Robots-Tag): tested in
#: tests/test_page_directives.py and tests/test_meta_middleware.py as
#: ``lenient-<id>``, and here.
PAGE_DIRECTIVE_LENIENCY = {"meta-semicolon", "meta-space", "robots-tag-empty-parameter"}
#: Checks stricter than RFC 9309 2.2.2, tested below as ``lenient-<id>``
#: (no warning: the file is not at fault).
CHECK_LENIENCY = {"dot-segments"}

#: (path as sent, the path a server resolves it to: RFC 3986 5.2.4, slashes merged)
DOT_SEGMENT_FORMS = [
    param("/./private/a", "/private/a", id="lenient-dot-segments-dot"),
    param("/x/../private/b", "/private/b", id="lenient-dot-segments-dot-dot"),
    param("//private/c", "/private/c", id="lenient-dot-segments-double-slash"),
    param("/%2e/private/d", "/private/d", id="lenient-dot-segments-encoded-dot"),
    param("/%2E%2E/private/e", "/private/e", id="lenient-dot-segments-encoded-dot-dot"),
]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        param("noindex; nofollow", ["noindex", "nofollow"], id="lenient-meta-semicolon"),
        param("noindex;nofollow;noarchive", ["noindex", "nofollow", "noarchive"], id="no-blank"),
        param(
            "unavailable_after: 2010-06-25; noindex",
            ["unavailable_after: 2010-06-25", "noindex"],
            id="after-a-date",
        ),
    ],
)
def test_lenient_page_directives(content: str, expected: list[str]) -> None:
    """LENIENT(meta-semicolon): a semicolon separates page-level directives too; the
    reading records it, so that the crawl says so (once, at INFO)."""
    from scrapy_rfc9309.parser._directives import split_directives

    lenient: set[str] = set()
    assert split_directives(content, lenient) == expected
    assert lenient == {"meta-semicolon"}


@pytest.mark.parametrize(
    ("content", "expected", "lenient"),
    [
        param("noindex nofollow", ["noindex", "nofollow"], {"meta-space"}, id="lenient-meta-space"),
        param("NONE  noarchive", ["none", "noarchive"], {"meta-space"}, id="upper-two-blanks"),
        param(
            "noindex nofollow; noarchive",
            ["noindex", "nofollow", "noarchive"],
            {"meta-space", "meta-semicolon"},
            id="both",
        ),
        param("noindex foo", ["noindex foo"], set(), id="unknown-word-kept-whole"),
    ],
)
def test_lenient_page_directives_space(
    content: str, expected: list[str], lenient: set[str]
) -> None:
    """LENIENT(meta-space): a blank separates page-level directives when every word is
    a known directive; anything else stays one (unknown) directive, as written."""
    from scrapy_rfc9309.parser._directives import split_directives

    found: set[str] = set()
    assert split_directives(content, found) == expected
    assert found == lenient


@pytest.mark.parametrize(("body", "url", "allowed", "warning_line"), LENIENT_CASES)
def test_lenient_reading(body: bytes, url: str, allowed: bool, warning_line: int) -> None:
    robots = RobotsTxt.parse(body)
    assert robots.allowed(url=url, agent="ExampleBot") is allowed
    assert warning_line in [line for line, _ in robots.warnings]


def test_lenient_nul_each_line_that_held_one_is_named() -> None:
    """LENIENT(nul): a NUL is read as if it were not there, and each line
    that held one gets its own warning (a rule read so is named where it
    is), not only the first."""
    robots = RobotsTxt.parse(b"User-agent: *\x00\nDisallow: /private/\nDis\x00allow: /a\x00\n")
    assert robots.warnings == ((1, "NUL bytes ignored"), (3, "NUL bytes ignored"))
    assert not robots.allowed(url="/a", agent="ExampleBot")
    # Past 20 lines, one warning for the rest: they never hide other findings.
    many = RobotsTxt.parse(b"User-agent: *\n" + b"Disallow: /\x00\n" * 30_000 + b"Disallow: x\n")
    assert many.warnings[19] == (21, "NUL bytes ignored")
    assert many.warnings[20] == (22, "NUL bytes ignored on this line and later ones")
    assert len(many.warnings) == 22 and many.warnings[-1][0] == 30_002  # still said


@pytest.mark.parametrize(("path", "resolved"), DOT_SEGMENT_FORMS)
def test_lenient_dot_segments_resolved_path(path: str, resolved: str) -> None:
    from scrapy_rfc9309.parser._dots import needs_resolving, resolved_path

    assert needs_resolving(path)
    assert resolved_path(path) == resolved


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        param("/a/b/../../..", "/", id="above-the-root"),
        param("/a/b/..", "/a/", id="final-dot-dot"),
        param("/a/.", "/a/", id="final-dot"),
        param("/a//b/./c?q=/./x//y", "/a/b/c?q=/./x//y", id="query-kept"),
        param("/.hidden/a..b", None, id="not-dot-segments"),
        param("/plain/path", None, id="plain"),
    ],
)
def test_resolved_path_rfc3986_5_2_4(path: str, resolved: str | None) -> None:
    from scrapy_rfc9309.parser._dots import resolved_path

    assert resolved_path(path) == resolved


@pytest.mark.parametrize(("path", "resolved"), DOT_SEGMENT_FORMS)
def test_lenient_dot_segments_disallowed_as_resolved(path: str, resolved: str) -> None:
    """LENIENT(dot-segments): a server serves ``/./private/a`` as ``/private/a``
    (RFC 3986 5.2.4; nginx merges slashes): both forms are checked, stricter
    than RFC 9309 2.2.2, and the verdict names the form that matched."""
    from scrapy_rfc9309.parser._compact import CompactRobots
    from scrapy_rfc9309.parser._verdicts import ResolvedVerdict

    robots = RobotsTxt.parse(b"User-agent: *\nAllow: /x/\nDisallow: /private\n")
    for url in (path, "https://example.com" + path):
        assert not robots.allowed(url=url, agent="ExampleBot")
        for verdict in (
            robots.check(url=url, agent="ExampleBot"),
            robots.denial(url=url, agent="ExampleBot"),
            CompactRobots(robots).denial(url=url, agent="ExampleBot"),
        ):
            assert isinstance(verdict, ResolvedVerdict)
            assert verdict == (False, 3, "Disallow: /private")
            assert cast(ResolvedVerdict, verdict).matched_as == resolved  # mypy: == made it a tuple
    assert robots.allowed(url="/x/./a", agent="ExampleBot")  # resolves to /x/a: allowed too
    assert robots.allowed(url="/./public", agent="ExampleBot")
    assert robots.allowed(url="/./robots.txt", agent="ExampleBot")


@pytest.mark.parametrize(("path", "resolved"), DOT_SEGMENT_FORMS)
def test_lenient_dot_segments_usage_lines_and_tdmrep_read_as_resolved(
    path: str, resolved: str
) -> None:
    """LENIENT(dot-segments) for usage preferences: a robots.txt
    ``Content-Usage`` path line (IETF AIPREF attach) and a tdmrep.json location
    (W3C TDMRep) are read for the path as sent and as the server resolves it,
    per category the most restrictive (AIPREF vocab: ``n`` wins), as a
    ``Disallow`` is matched on both."""
    from scrapy_rfc9309.parser._dots import resolved_url
    from scrapy_rfc9309.parser._tdmrep import parse_tdmrep
    from scrapy_rfc9309.parser._usage_decision import decide_usage, site_sources

    url = "https://example.com" + path
    assert resolved_url(url) == "https://example.com" + resolved
    robots = RobotsTxt.parse(b"User-agent: *\nContent-Usage: /private train-ai=n\n")
    tdmrep = parse_tdmrep(b'[{"location": "/private*", "tdm-reservation": 1}]')
    sources = site_sources(robots, url, "ExampleBot", tdmrep)
    refused = sources.robots_txt.get("train-ai")
    assert refused is not None and not refused.allowed and refused.line == 2
    reserved = sources.tdmrep.get("train-ai")
    assert reserved is not None and not reserved.allowed
    assert decide_usage(sources, ("train-ai",)).refusal is not None
    as_path = site_sources(robots, path, "ExampleBot", tdmrep)  # a path alone, as RobotsTxt takes
    assert as_path.robots_txt.refusal(["train-ai"]) is not None
    assert as_path.tdmrep.refusal(["train-ai"]) is not None
    plain = site_sources(robots, "https://example.com/public", "ExampleBot", tdmrep)
    assert not plain.robots_txt and not plain.tdmrep


@pytest.mark.parametrize(
    ("url", "resolved"),
    [
        param("https://e.com/a/../b?q=/../c#f/..", "https://e.com/b?q=/../c", id="query-kept"),
        param("https://e.com:8/./p", "https://e.com:8/p", id="port"),
        param("https://e.com?x/../y", None, id="no-path"),
        param("https://e.com", None, id="authority-only"),
        param("https://e.com/plain", None, id="plain"),
    ],
)
def test_resolved_url_resolves_the_path_only(url: str, resolved: str | None) -> None:
    from scrapy_rfc9309.parser._dots import resolved_url

    assert resolved_url(url) == resolved


@deferred_f_from_coro_f
async def test_lenient_dot_segments_never_sent_to_the_server(sites, caplog) -> None:
    """LENIENT(dot-segments), in a real crawl: none of the five forms of a
    disallowed path reaches the server; an allowed path does (RFC 9309 2.2.2)."""
    page = text("<html>page</html>", content_type=b"text/html")
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /private\n")}, default=page)
    forms = [case.values[0] for case in DOT_SEGMENT_FORMS]
    with caplog.at_level(logging.DEBUG, logger="scrapy_rfc9309"):
        spider, stats = await crawl([site.url(path) for path in [*forms, "/public"]])
    assert spider.fetched == [site.url("/public")]
    assert site.hits == ["/robots.txt", "/public"]
    assert stats["robotstxt/forbidden"] == len(forms)
    assert (
        '"Disallow: /private" (matched as /private/a, the path the server resolves '
        "/./private/a to)" in caplog.text
    )


def test_every_lenient_tag_in_the_source_is_tested() -> None:
    source = Path(scrapy_rfc9309.__file__).parent
    tags = set()
    for path in source.rglob("*.py"):
        tags |= set(re.findall(r"LENIENT\(([a-z0-9-]+)\)", path.read_text()))
    tested = {cast(str, case.id).removeprefix("lenient-") for case in LENIENT_CASES}
    tested |= PAGE_DIRECTIVE_LENIENCY | CHECK_LENIENCY
    assert tags, "no LENIENT tags found"
    assert tags <= tested, f"untested leniency: {sorted(tags - tested)}"


@pytest.mark.parametrize(
    "ending", [param(b"\n", id="2.2-LF"), param(b"\r\n", id="2.2-CRLF"), param(b"\r", id="2.2-CR")]
)
def test_2_2_line_endings(ending: bytes) -> None:
    body = ending.join([b"user-agent: *", b"disallow: /a", b"allow: /a/b", b""])
    robots = RobotsTxt.parse(body)
    assert robots.check(url="/a/x", agent="x").line == 2
    assert robots.check(url="/a/b", agent="x").line == 3


def test_2_2_no_other_character_ends_a_line() -> None:
    # str.splitlines() would split at these; RFC 9309's NL is CR, LF or CRLF only.
    rest = "\x0b\x0c\x1c\x85\u2028disallow: /b"
    robots = RobotsTxt.parse("user-agent: *\ndisallow: /a" + rest + "\n")
    assert robots.allowed(url="/b", agent="x")
    assert robots.check(url="/a" + rest + "/x", agent="x").line == 2


def test_invalid_utf8_is_never_dropped() -> None:
    # Scrapy decodes with errors="ignore": "Allow: /\xe9" would become "Allow: /".
    robots = RobotsTxt.parse(b"user-agent: *\ndisallow: /\nallow: /\xe9\n")
    assert not robots.allowed(url="/other", agent="x")
    verdict = robots.check(url="/%e9", agent="x")
    assert verdict.allowed and verdict.rule == "allow: /\\xe9"


def test_unknown_and_broken_lines_are_warned_about() -> None:
    robots = RobotsTxt.parse("foo: bar\njunk line\nuser-agent: *\ndisallow: /x\nuser-agent: ???\n")
    lines = [line for line, _ in robots.warnings]
    assert lines == [1, 2, 5]
    assert not robots.allowed(url="/x", agent="a")


def test_rules_before_any_group_are_warned_about() -> None:
    robots = RobotsTxt.parse("disallow: /x\n")
    assert robots.warnings == ((1, "rule before any user-agent line ignored"),)


def test_2_2_1_lenient_agent_glob_keeps_exact_matching() -> None:
    """``Googlebot*`` governs ``Googlebot`` only (RFC 9309 2.2.1: exact match)."""
    robots = RobotsTxt.parse(
        "user-agent: Mediapartners-Google*\ndisallow: /ads\n"
        "user-agent: Googlebot*\ndisallow: /g\nuser-agent: *\ndisallow: /all\n"
    )
    assert not robots.allowed(url="/g", agent="Googlebot")
    assert robots.allowed(url="/all", agent="Googlebot")
    assert not robots.allowed(url="/ads", agent="Mediapartners-Google")
    assert robots.allowed(url="/g", agent="Googlebot-Image")
    assert not robots.allowed(url="/all", agent="Googlebot-Image")
    assert [line for line, _ in robots.warnings] == [1, 3]


@pytest.mark.parametrize(
    ("rule", "url", "allowed"),
    [
        param("Disallow: https://e.com/shop/", "/shop/a", False, id="lenient-rule-url-path"),
        param("Disallow: https://e.com/shop/", "/other", True, id="lenient-rule-url-only"),
        param("Disallow: HTTP://example.com/a?b=1", "/a?b=1&c", False, id="lenient-rule-url-query"),
        param("Disallow: http://example.com/*.pdf$", "/x/y.pdf", False, id="lenient-rule-url-glob"),
        param("Disallow: http://example.com/*.pdf$", "/x/y.pdfx", True, id="lenient-rule-url-end"),
        param("Disallow: https://other.example.com", "/x", True, id="lenient-rule-url-host-only"),
        param("Disallow: http://search.example.com/", "/", True, id="lenient-rule-url-host-root"),
        param("Disallow: http://search.example.com/*", "/a", True, id="lenient-rule-url-host-star"),
        param("Disallow: shop/", "/shop/a", False, id="lenient-rule-without-slash-kept"),
    ],
)
def test_2_2_2_lenient_rules_written_as_urls_use_their_path(
    rule: str, url: str, allowed: bool
) -> None:
    robots = RobotsTxt.parse(f"user-agent: *\n{rule}\n")
    assert robots.allowed(url=url, agent="ExampleBot") is allowed
    assert robots.warnings[0][0] == 2
    if not allowed:
        assert robots.check(url=url, agent="ExampleBot").rule == rule


@pytest.mark.parametrize("codec", [param("utf-16-le", id="LE"), param("utf-16-be", id="BE")])
def test_2_3_lenient_utf16_bom_reads_every_line_and_non_ascii(codec: str) -> None:
    text = "\ufeffUser-agent: *\nDisallow: /ツ\nAllow: /ツ/ok\nUser-agent: b\nDisallow: /b\n"
    robots = RobotsTxt.parse(text.encode(codec))
    assert not robots.allowed(url="/%E3%83%84/x", agent="ExampleBot")
    assert robots.check(url="/ツ/ok", agent="ExampleBot") == (True, 3, "Allow: /ツ/ok")
    assert not robots.allowed(url="/b", agent="b")
    assert not robots.truncated


def test_2_5_lenient_utf16_size_limit_counts_octets_read() -> None:
    """RFC 9309 2.5: the limit applies to the octets read; a cut line is dropped."""
    body = "\ufeffuser-agent: *\ndisallow: /a\ndisallow: /bbbbbb\n".encode("utf-16-le")
    robots = RobotsTxt.parse(body, max_size=len(body) - 5)
    assert robots.truncated
    assert not robots.allowed(url="/a", agent="x")
    assert robots.allowed(url="/bbbbbb", agent="x") and robots.allowed(url="/b", agent="x")

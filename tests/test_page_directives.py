"""Reading page-level robots directives (HTTP: The Definitive Guide ch. 9, robots META
tag; ``X-Robots-Tag``): pure unit and property tests, no Scrapy."""

from __future__ import annotations

import gzip
import time
import zlib
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rfc9309.parser._directives import (
    EMPTY,
    MAX_HEAD_BYTES,
    MAX_HEADER_BYTES,
    MAX_HEADER_VALUES,
    MAX_META_TAGS,
    MAX_TAG_ATTRIBUTES,
    MAX_TAG_BYTES,
    parse_date,
    split_directives,
)
from scrapy_rfc9309.parser._html_head import head_of_body
from scrapy_rfc9309.parser._page_directives import read_page_directives
from scrapy_rfc9309.parser._usage_signals import read_usage_signals

from .hostile_pages import HOSTILE_UNITS, hostile_heads
from .profiles import examples

param = pytest.param
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
HTML = {"Content-Type": "text/html; charset=utf-8"}
NOINDEX = {"noindex"}
BOTH = {"noindex", "nofollow"}


def meta(body: str | bytes, token: str = "ExampleBot", headers: object = None) -> set[str]:
    data = body.encode() if isinstance(body, str) else body
    page = read_page_directives("http://x/", 200, headers or HTML, data, token, now=NOW)
    return set(page.directives)


def header(*values: str, token: str = "ExampleBot", content_type: str = "text/html") -> set[str]:
    pairs = [("X-Robots-Tag", value) for value in values] + [("Content-Type", content_type)]
    return set(read_page_directives("http://x/", 200, pairs, b"", token, now=NOW).directives)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        param('<meta name="robots" content="noindex,nofollow">', {"noindex", "nofollow"}, id="ch9"),
        param("<META NAME=ROBOTS CONTENT=NOINDEX>", {"noindex"}, id="ch9-case-insensitive"),
        param("<meta content='noarchive' name='Robots'/>", {"noarchive"}, id="ch9-attr-order"),
        param(
            '<meta name="robots" content="none">', {"none", "noindex", "nofollow"}, id="ch9-none"
        ),
        param('<meta name="robots" content="all">', {"all"}, id="ch9-all"),
        param('<meta name="robots" content="index,follow">', {"index", "follow"}, id="ch9-index"),
        param(
            '<meta name="robots" content="all"><meta name="robots" content="noindex">',
            {"noindex"},
            id="ch9-most-restrictive-wins",
        ),
        param(
            '<meta name="robots" content="index, nofollow">'
            '<meta name="examplebot" content="follow">',
            {"index", "nofollow"},
            id="ch9-several-tags-combine",
        ),
        param('<meta name="examplebot" content="noindex">', {"noindex"}, id="ch9-our-token"),
        param('<meta name="otherbot" content="noindex">', set(), id="ch9-other-agent"),
        param('<meta name="examplebot-news" content="noindex">', set(), id="token-is-whole"),
        param('<meta name="robots" content="max-snippet : 50, NoAI">', {"max-snippet:50", "noai"}),
        param('<meta name="robots" content="no&#105;ndex">', {"noindex"}, id="entities"),
        param('<meta name="robots">', set(), id="no-content"),
        param('<meta content="noindex">', set(), id="no-name"),
        param('<metadata name="robots" content="noindex">', set(), id="not-meta"),
        param('<!-- <meta name="robots" content="noindex"> -->', set(), id="comment"),
        param("<script>'<meta name=robots content=noindex>'</script>", set(), id="script"),
        param("<style>/*<meta name=robots content=noindex>*/</style>", set(), id="style"),
        param('<meta name="robots" content="noindex', set(), id="unclosed-quote"),
        # forms seen in the wild
        param('<meta name="robots" content=" NoIndex ,NOFOLLOW ">', BOTH, id="blanks-and-case"),
        param('<meta  name = "robots"  content = "noindex" >', NOINDEX, id="blanks-around-equals"),
        param('<meta name=" Robots " content="noindex">', NOINDEX, id="blanks-in-name"),
        param('<meta name="ROBOTS" content="NOINDEX">', NOINDEX, id="upper-case-name"),
        param("<meta name='robots' content='noindex'>", NOINDEX, id="single-quotes"),
        param("<meta name=robots content=noindex/>", NOINDEX, id="unquoted-self-closing"),
        param("<meta name=robots content=no/index>", {"no/index"}, id="unquoted-slash-inside"),
        param("<meta name=robots content=noindex />", NOINDEX, id="unquoted-blank-slash"),
        param('<meta content="noindex" name="robots">', NOINDEX, id="content-before-name"),
        param('<meta name="robots" name="x" content="noindex">', NOINDEX, id="first-name-wins"),
        param('<meta name="x" name="robots" content="noindex">', set(), id="duplicate-ignored"),
        param('<meta name="robots" content="noindex" content="x">', NOINDEX, id="first-content"),
        param('<meta name="robots" content="&#110;oindex,&amp;x">', {"noindex", "&x"}, id="ent"),
        param('<meta name="robots"\ncontent="noindex"\n>', NOINDEX, id="newlines"),
        param('<meta/name="robots"/content="noindex">', NOINDEX, id="slashes"),
        param('<meta name="robots" content="noindex; nofollow">', BOTH, id="lenient-semicolon"),
        param('<meta name="robots" content="noindex;nofollow;">', BOTH, id="lenient-semicolon-2"),
        param('<meta name="robots" content="noindex>', set(), id="unclosed-at-end"),
        param('<meta name="robots" content="noindex nofollow">', BOTH, id="lenient-space"),
        param('<meta name="robots" content=" NOINDEX \t NoFollow ">', BOTH, id="lenient-space-2"),
        param(
            '<meta name="robots" content="noindex nofollow, max-snippet:5">',
            {*BOTH, "max-snippet:5"},
            id="lenient-space-in-a-list",
        ),
        param('<meta name="robots" content="noindex foo">', {"noindex foo"}, id="space-unknown"),
    ],
)
def test_meta_tags_in_the_head(head: str, expected: set[str]) -> None:
    assert meta(f"<html><head><title>t</title>{head}</head><body>x</body></html>") == expected


@pytest.mark.parametrize(
    "body",
    [
        param('<html><head></head><body><meta name="robots" content="noindex">', id="in-body"),
        param('<html><body><p><meta name="robots" content="noindex">', id="no-head"),
        param('<head></head><meta name="robots" content="noindex">', id="after-head"),
    ],
)
def test_meta_outside_the_head_is_ignored(body: str) -> None:
    assert meta(body) == set()


@pytest.mark.parametrize(
    "before",
    [
        param("<title>a <body> b</title>", id="title"),
        param("<TITLE>a </head> b</TITLE>", id="title-head-end"),
        param("<title>x <!-- y</title>", id="title-comment-start"),
        param("<textarea><body></textarea>", id="textarea"),
        param("<noscript></noscript><iframe><body></iframe>", id="iframe"),
    ],
)
def test_text_of_title_and_textarea_is_not_markup(before: str) -> None:
    """HTML: the content of <title>, <textarea> (escapable raw text) and other text
    elements is text: a "<body" there does not end the head (HTTP: The Definitive
    Guide ch. 9: the robots META tag is read in the head)."""
    body = f'<html><head>{before}<meta name="robots" content="noindex"></head><body>x'
    assert meta(body) == NOINDEX


def test_meta_written_in_a_title_is_not_a_tag() -> None:
    assert meta('<head><title><meta name="robots" content="noindex"></title></head>') == set()


HEAD_16 = '<html><head><meta name="robots" content="noindex, Nofollow"></head><body>x'


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        param(HEAD_16.encode("utf-16"), "text/html", id="bom"),
        param(b"\xfe\xff" + HEAD_16.encode("utf-16-be"), "text/html", id="bom-be"),
        param(HEAD_16.encode("utf-16"), None, id="bom-no-content-type"),
        param(HEAD_16.encode("utf-16-le"), "text/html; charset=UTF-16", id="declared"),
        param(HEAD_16.encode("utf-16-le"), "text/html; charset=utf-16le", id="declared-le"),
        param(HEAD_16.encode("utf-16-be"), 'text/html;charset="utf-16be"', id="declared-be"),
        param(HEAD_16.encode("utf-32"), "text/html", id="utf-32-bom"),
    ],
)
def test_utf16_pages_are_read_in_their_encoding(data: bytes, content_type: str | None) -> None:
    """HTTP: The Definitive Guide ch. 9: the robots META tag of a page that is not in
    an ASCII-compatible encoding (UTF-16 by its byte order mark or charset) is read."""
    headers = {"Content-Type": content_type} if content_type else {}
    page = read_page_directives("u", 200, headers, data, "examplebot")
    assert set(page.directives) == BOTH
    usage = HEAD_16.replace("robots", "tdm-reservation").replace("noindex, Nofollow", "1")
    encoded = usage.encode("utf-16")
    assert read_usage_signals(200, {"Content-Type": "text/html"}, encoded) == [
        ('<meta name="tdm-reservation">', "1")
    ]


def test_a_utf8_byte_order_mark_wins_over_a_declared_utf16() -> None:
    data = b"\xef\xbb\xbf" + HEAD_16.encode()
    page = read_page_directives("u", 200, {"Content-Type": "text/html; charset=utf-16"}, data, "x")
    assert set(page.directives) == BOTH


def test_utf16_reading_is_bounded() -> None:
    data = "<html><head>" + " " * MAX_HEAD_BYTES + '<meta name="robots" content="noindex">'
    page = read_page_directives("u", 200, HTML, data.encode("utf-16"), "examplebot")
    assert page.directives == frozenset() and "MAX_HEAD_BYTES" in page.truncated


def test_implicit_head_before_the_body_is_read() -> None:
    assert meta("<!doctype html><meta name=robots content=nofollow><p>x") == {"nofollow"}


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        param(["noindex"], {"noindex"}, id="plain"),
        param(["NoIndex, NoFollow"], {"noindex", "nofollow"}, id="list-case"),
        param(["noindex", "nofollow"], {"noindex", "nofollow"}, id="several-lines"),
        param(["examplebot: noindex"], {"noindex"}, id="addressed-to-us"),
        param(["ExampleBot: noindex, nofollow"], {"noindex", "nofollow"}, id="addressed-list"),
        param(["otherbot: noindex"], set(), id="addressed-to-another"),
        param(["otherbot: noindex", "nofollow"], {"nofollow"}, id="another-and-plain"),
        param(
            ["otherbot: noindex, examplebot: noarchive"], {"noarchive"}, id="two-agents-one-line"
        ),
        param(["max-snippet: 20"], {"max-snippet:20"}, id="value-directive-not-an-agent"),
        param(["max-image-preview: large"], {"max-image-preview:large"}, id="value-directive-2"),
        param(["all", "none"], {"none", "noindex", "nofollow"}, id="most-restrictive-wins"),
        param(["", " , ,"], set(), id="empty"),
        param(["noindex; nofollow"], BOTH, id="lenient-semicolon"),
        param(["examplebot: noindex; otherbot: nofollow"], NOINDEX, id="lenient-semicolon-agents"),
    ],
)
def test_x_robots_tag(values: list[str], expected: set[str]) -> None:
    assert header(*values) == expected


@pytest.mark.parametrize(
    ("date", "expired"),
    [
        param("Friday, 25-Jun-10 15:00:00 PST", True, id="rfc850"),
        param("Wed, 25 Jun 2010 15:00:00 GMT", True, id="rfc822"),
        param("25 Jun 2010 15:00:00 PST", True, id="rfc822-no-weekday"),
        param("Sun Nov  6 08:49:37 1994", True, id="asctime"),
        param("2010-06-25", True, id="iso8601-date"),
        param("2025-12-31T23:30:00-02:00", False, id="iso8601-offset-future"),
        param("2025-12-31T23:30:00+02:00", True, id="iso8601-offset-past"),
        param("2999-06-25T15:00:00Z", False, id="iso8601-future"),
        param("Wed, 25 Jun 2999 15:00:00 GMT", False, id="rfc822-future"),
        param("not a date", False, id="unparseable-ignored"),
    ],
)
def test_unavailable_after(date: str, expired: bool) -> None:
    found = header(f"unavailable_after: {date}")
    assert ("noindex" in found) is expired
    assert f"unavailable_after: {date.lower()}" in found
    in_meta = meta(f'<head><meta name="robots" content="unavailable_after: {date}, noarchive">')
    assert ("noindex" in in_meta) is expired
    assert "noarchive" in in_meta


def test_unavailable_after_addressed_with_commas_in_the_date() -> None:
    found = header("examplebot: unavailable_after: Wed, 25 Jun 2010 15:00:00 GMT, nofollow")
    assert found == {"unavailable_after: wed, 25 jun 2010 15:00:00 gmt", "noindex", "nofollow"}


def test_parse_date_forms() -> None:
    assert parse_date("2010-06-25T15:00:00+02:00") == datetime(2010, 6, 25, 13, tzinfo=timezone.utc)
    assert parse_date("2010-02-30") is None
    assert parse_date("") is None


def test_lenient_space_is_recorded() -> None:
    """LENIENT(meta-space): blanks separate when every word is a known directive."""
    lenient: set[str] = set()
    assert split_directives("noindex  nofollow", lenient) == ["noindex", "nofollow"]
    assert lenient == {"meta-space"}
    lenient.clear()
    assert split_directives("noindex nosuch", lenient) == ["noindex nosuch"]
    assert split_directives("unavailable_after: 25 Jun 2010", lenient) == [
        "unavailable_after: 25 jun 2010"
    ]
    assert lenient == set()
    page = read_page_directives(
        "u", 200, {"X-Robots-Tag": "examplebot: noindex nofollow"}, b"", "examplebot"
    )
    assert page.directives == BOTH and page.lenient == {"meta-space"}
    page = read_page_directives(
        "u", 200, {"X-Robots-Tag": "otherbot: noindex nofollow"}, b"", "examplebot"
    )
    assert page.directives == frozenset() and page.lenient == frozenset()


def test_split_directives() -> None:
    assert split_directives(" NoIndex ,, Max-Snippet : 5 ,noai") == [
        "noindex",
        "max-snippet:5",
        "noai",
    ]


def test_lenient_semicolon_is_recorded() -> None:
    """LENIENT(meta-semicolon): the reading says it used the lenient form."""
    lenient: set[str] = set()
    assert split_directives("noindex ; NoFollow", lenient) == ["noindex", "nofollow"]
    assert lenient == {"meta-semicolon"}
    page = read_page_directives("u", 200, HTML, b"<meta name=robots content='a;b'>", "x")
    assert page.lenient == {"meta-semicolon"} and page.directives == {"a", "b"}
    page = read_page_directives("u", 200, HTML, b"<meta name=robots content='a,b'>", "x")
    assert page.lenient == frozenset()


def test_sources_name_the_tag_and_the_header() -> None:
    page = read_page_directives(
        "http://x/p",
        200,
        {b"X-Robots-Tag": [b"examplebot: nofollow", b"noindex"], b"Content-Type": [b"text/html"]},
        b'<head><meta name="robots" content="nofollow">'
        b'<meta name="ExampleBot" content="noarchive">',
        "examplebot",
        now=NOW,
    )
    assert page.sources["nofollow"] == ("X-Robots-Tag: examplebot", '<meta name="robots">')
    assert page.source_of("noindex") == "X-Robots-Tag"
    assert page.source_of("noarchive") == '<meta name="examplebot">'
    assert page.nofollow and page.noindex and page.noarchive
    assert page.url == "http://x/p"
    assert page.describe() == [
        'noarchive (<meta name="examplebot">)',
        'nofollow (X-Robots-Tag: examplebot, <meta name="robots">)',
        "noindex (X-Robots-Tag)",
    ]


@pytest.mark.parametrize(
    ("content_type", "status", "read"),
    [
        param("application/pdf", 200, False, id="pdf"),
        param("text/plain", 200, False, id="text"),
        param("application/xhtml+xml", 200, True, id="xhtml"),
        param(None, 200, True, id="no-content-type-looks-like-html"),
        param("text/html", 301, False, id="redirect-body"),
        param("text/html", 404, True, id="error-page"),
    ],
)
def test_which_bodies_are_read(content_type: str | None, status: int, read: bool) -> None:
    headers = [("Content-Type", content_type)] if content_type else []
    body = b'<head><meta name="robots" content="noindex">'
    page = read_page_directives("http://x/", status, headers, body, "x", now=NOW)
    assert page.noindex is read


def test_a_page_that_states_nothing_gives_the_shared_empty_result() -> None:
    """Most pages state no directive: they share one result (no object per page),
    whether the headers are Scrapy's or a plain list of pairs."""
    from scrapy.http.headers import Headers

    body = b"<html><head><title>t</title></head><body>b</body></html>"
    for headers in (Headers(HTML), list(HTML.items())):
        page = read_page_directives("http://x/a", 200, headers, body, "ExampleBot", now=NOW)
        assert page is EMPTY and not page.directives


@pytest.mark.parametrize(
    "headers",
    [
        param({"X-Robots-Tag": "ExampleBot: noindex"}, id="x-robots-tag"),
        param({"Robots-Tag": "examplebot;noindex"}, id="robots-tag"),
        param({"x-robots-tag": "ExampleBot: noindex"}, id="x-robots-tag-lower-case"),
    ],
)
def test_scrapy_headers_are_read_when_present(headers: dict[str, str]) -> None:
    """Scrapy's ``Headers`` are looked up by their own entries (an absent header costs
    no call): a present one, whatever case it was set in, is read."""
    from scrapy.http.headers import Headers

    page = read_page_directives("http://x/", 200, Headers(headers), b"", "ExampleBot", now=NOW)
    assert page.directives == {"noindex"}


def test_the_agents_read_for_are_kept_per_token_bounded() -> None:
    """The tokens (ours and ROBOTSTXT_ALSO_OBEY's) a crawl reads directives for are
    kept per token, and a spider that rotates its User-Agent keeps at most a bound."""
    from scrapy_rfc9309.parser import _page_directives

    assert _page_directives._agents_of(" ExampleBot", ("GPTBot ",)) == {"examplebot", "gptbot"}
    assert _page_directives._agents_of("ExampleBot", ["GPTBot"]) == {"examplebot", "gptbot"}
    for n in range(3 * _page_directives._AGENTS_KEPT):
        assert _page_directives._agents_of(f"Bot{n}", ()) == {f"bot{n}"}
        assert len(_page_directives._AGENTS) <= _page_directives._AGENTS_KEPT


def test_headers_of_a_pdf_are_read() -> None:
    assert header("noindex", content_type="application/pdf") == {"noindex"}


def test_only_the_first_bytes_are_read() -> None:
    late = b"<head>" + b" " * MAX_HEAD_BYTES + b'<meta name="robots" content="noindex">'
    assert meta(late) == set()
    early = b'<head><meta name="robots" content="noindex">' + b" " * (2 * MAX_HEAD_BYTES)
    assert meta(early) == {"noindex"}


ROBOTS = '<meta name="robots" content="noindex">'


def truncated(body: str | bytes, *pairs: tuple[str, str]) -> tuple[set[str], set[str]]:
    data = body.encode() if isinstance(body, str) else body
    headers = [("Content-Type", "text/html"), *pairs]
    page = read_page_directives("u", 200, headers, data, "examplebot", now=NOW)
    return set(page.directives), set(page.truncated)


@pytest.mark.parametrize(
    ("body", "pairs", "expected"),
    [
        param(b"<head>" + b" " * MAX_HEAD_BYTES + ROBOTS.encode(), (), "MAX_HEAD_BYTES", id="head"),
        param(
            b"<head><!--" + b" " * MAX_HEAD_BYTES + b"-->" + ROBOTS.encode(),
            (),
            "MAX_HEAD_BYTES",
            id="head-in-a-comment",
        ),
        param(
            '<meta name="robots" data-x="' + "x" * MAX_TAG_BYTES + '" content="noindex">',
            (),
            "MAX_TAG_BYTES",
            id="tag-bytes",
        ),
        param(
            '<meta name="robots" ' + "a " * MAX_TAG_ATTRIBUTES + 'content="noindex">',
            (),
            "MAX_TAG_ATTRIBUTES",
            id="tag-attributes",
        ),
        param(
            "<head><noscript>" + "robots " * MAX_META_TAGS + "</noscript>" + ROBOTS,
            (),
            "MAX_META_TAGS",
            id="meta-tags",
        ),
        param(
            "",
            [("X-Robots-Tag", "x")] * MAX_HEADER_VALUES + [("X-Robots-Tag", "noindex")],
            "MAX_HEADER_VALUES",
            id="header-values",
        ),
        param(
            "",
            [("X-Robots-Tag", "x," + " " * MAX_HEADER_BYTES + ",noindex")],
            "MAX_HEADER_BYTES",
            id="header-bytes",
        ),
    ],
)
def test_content_past_a_limit_is_not_read_and_the_limit_is_named(
    body: str | bytes, pairs: list[tuple[str, str]], expected: str
) -> None:
    directives, limits = truncated(body, *pairs)
    assert "noindex" not in directives
    assert limits == {expected}


@pytest.mark.parametrize(
    ("body", "pairs"),
    [
        param(b"<head>" + b" " * (MAX_HEAD_BYTES - 100) + ROBOTS.encode(), (), id="head"),
        param(b"<head>" + ROBOTS.encode() + b"</head>" + b"x" * MAX_HEAD_BYTES, (), id="long-body"),
        param(b"<head><title>t</title></head>" + b" " * MAX_HEAD_BYTES, (), id="no-directive"),
        param('<meta name="robots" data-x="' + "x" * 3000 + '" content="noindex">', (), id="tag"),
        param('<meta name="robots" ' + "a " * 14 + 'content="noindex">', (), id="attributes"),
        param("<title>" + "robots " * 100 + "</title>" + ROBOTS, (), id="places"),
        param("", [("X-Robots-Tag", "x")] * 63 + [("X-Robots-Tag", "noindex")], id="values"),
        param("", [("X-Robots-Tag", "x," + " " * 8000 + ",noindex")], id="header-bytes"),
    ],
)
def test_content_within_the_limits_is_read_and_nothing_is_truncated(
    body: str | bytes, pairs: list[tuple[str, str]]
) -> None:
    directives, limits = truncated(body, *pairs)
    assert limits == set()
    if b"robots" in (body.encode() if isinstance(body, str) else body) or pairs:
        assert "noindex" in directives


def test_an_unclosed_tag_at_the_end_of_a_whole_body_is_not_a_limit() -> None:
    # HTML drops a tag cut by the end of the file; nothing was left unread.
    assert truncated('<head><meta name="robots" content="noindex"') == (set(), set())


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        param("gzip", gzip.compress, id="gzip"),
        param("deflate", zlib.compress, id="deflate-zlib"),
        param("deflate", lambda data: zlib.compress(data)[2:-4], id="deflate-raw"),
        param("identity", lambda data: data, id="identity"),
    ],
)
def test_head_of_a_compressed_body(encoding: str, compress: object) -> None:
    body = b'<head><meta name="robots" content="noarchive"></head>' + b"x" * 1_000_000
    head = head_of_body(compress(body), encoding)  # type: ignore[operator]
    assert head.startswith(b"<head>") and len(head) <= MAX_HEAD_BYTES
    assert head_of_body(b"not gzip", "gzip") == b""
    assert head_of_body(body, "br") == b""


# -- hostile input -----------------------------------------------------------------------

#: Heads made to be slow to read (MAX_HEAD_BYTES each); also in benchmarks/meta.py.
HOSTILE_HEADS = hostile_heads()


@pytest.mark.parametrize(
    "body",
    [
        param(b"<meta " * 200_000, id="many-open-tags"),
        param(b'<meta name="' + b"x" * 3_000_000, id="unclosed-quote"),
        param(b"<meta a='" * 200_000, id="unclosed-single-quotes"),
        param(b"<!--" * 500_000, id="unclosed-comments"),
        param(b"<script>" + b"<" * 3_000_000, id="unclosed-script"),
        param(b"<meta name=robots content=" + b"a," * 1_500_000, id="huge-list"),
        param(b"<meta " + b"a=b " * 1_000_000, id="many-attributes"),
        *(param(body, id=name) for name, body in HOSTILE_HEADS.items()),
    ],
)
def test_hostile_bodies_take_bounded_time(body: bytes) -> None:
    started = time.process_time()
    read_page_directives("http://x/", 200, HTML, body, "x")
    # a generous bound: linear and capped (the process's CPU time: other
    # processes on a loaded machine do not count in it)
    assert time.process_time() - started < 2.0


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(st.sampled_from(HOSTILE_UNITS), min_size=1, max_size=6),
    st.integers(1, 3 * MAX_HEAD_BYTES),
    st.sampled_from(["examplebot", "robots", "meta", "a"]),
)
def test_hostile_mixtures_never_raise(units: list[bytes], size: int, token: str) -> None:
    """Mixtures of the hostile heads' pieces, of any size up to past the limit."""
    unit = b"".join(units)
    body = (unit * (size // len(unit) + 1))[:size]
    page = read_page_directives("u", 200, HTML, body, token)
    assert all(name == name.lower() for name in page.directives)
    assert page.truncated <= {
        "MAX_HEAD_BYTES",
        "MAX_TAG_BYTES",
        "MAX_TAG_ATTRIBUTES",
        "MAX_META_TAGS",
    }
    if size <= MAX_HEAD_BYTES:
        assert "MAX_HEAD_BYTES" not in page.truncated


def test_hostile_headers() -> None:
    values = [b"x: " + b"a," * 100_000] * 1000
    started = time.process_time()
    read_page_directives("http://x/", 200, {b"X-Robots-Tag": values}, b"", "x")
    assert time.process_time() - started < 2.0


def test_malformed_headers_object_never_raises() -> None:
    assert not read_page_directives("u", 200, object(), b"<meta>", "x").directives
    assert not read_page_directives("u", 200, {1: 2}, None, "x").directives


# -- properties --------------------------------------------------------------------------

KNOWN = ["noindex", "nofollow", "noarchive", "index", "follow", "all", "none", "noai"]
directive_lists = st.lists(st.sampled_from(KNOWN), min_size=1, max_size=5)


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=3000), st.text(max_size=200))
def test_never_raises_on_any_body_or_header(body: bytes, value: str) -> None:
    page = read_page_directives("u", 200, [("X-Robots-Tag", value)], body, "ExampleBot")
    assert all(name == name.lower() for name in page.directives)
    assert set(page.sources) == set(page.directives)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(directive_lists, min_size=1, max_size=4))
def test_meta_tags_and_headers_agree_and_order_does_not_matter(lists: list[list[str]]) -> None:
    tags = "".join(f'<meta name="robots" content="{", ".join(items)}">' for items in lists)
    from_meta = meta(f"<head>{tags}</head>")
    from_headers = header(*(", ".join(items) for items in lists))
    reversed_tags = "".join(
        f'<meta name="robots" content="{", ".join(items)}">' for items in reversed(lists)
    )
    assert from_meta == from_headers
    flat = {name for items in lists for name in items}
    assert ("noindex" in from_meta) == bool(flat & {"noindex", "none"})
    assert ("nofollow" in from_meta) == bool(flat & {"nofollow", "none"})
    assert "index" not in from_meta or "noindex" not in from_meta
    assert meta(f"<head>{reversed_tags}</head>") == from_meta


@settings(max_examples=examples(100), deadline=None)
@given(directive_lists, st.sampled_from(["ExampleBot", "examplebot", "EXAMPLEBOT"]))
def test_addressed_header_is_ours_whatever_the_case(items: list[str], spelling: str) -> None:
    value = f"{spelling}: {', '.join(items)}"
    assert header(value) == header(", ".join(items))
    assert header(value, token="OtherBot") == set()


@pytest.mark.parametrize("offset", [0, 8 * 1024 - 20, 8 * 1024 - 3, 32 * 1024 - 10, 100_000])
def test_a_long_head_is_read_across_chunks(offset: int) -> None:
    # The head is lower-cased and scanned in growing chunks; tags cut by a chunk's
    # end are found once the chunk grows.
    filler = "<script>" + "x" * offset + "</script>"
    tags = '<meta name="robots" content="noindex"><!-- c -->'
    tags += '<meta name="examplebot" content="nofollow">'
    assert meta(f"<html><head>{filler}{tags}</head>") == {"noindex", "nofollow"}
    assert meta(f"<html><head><title>{'y' * offset}</title>{tags}") == {"noindex", "nofollow"}


def test_many_words_robots_in_the_head_stay_linear() -> None:
    body = b"<head><title>" + b"robots " * 100_000 + b"</title>" + b"x" * 200_000
    started = time.process_time()
    read_page_directives("http://x/", 200, HTML, body, "examplebot")
    assert time.process_time() - started < 2.0


def test_scrapy_headers() -> None:
    from scrapy.http import Headers

    headers = Headers({"x-robots-tag": ["noindex", "examplebot: nofollow"], "content-type": "x/y"})
    page = read_page_directives(
        "u", 200, headers, b"<meta name=robots content=noarchive>", "examplebot"
    )
    assert page.directives == {"noindex", "nofollow"}


@pytest.mark.parametrize(
    "given",
    [
        {"X-Robots-Tag": "noindex"},
        {"x-robots-tag": ["noindex", "examplebot: nofollow"]},
        {b"X-ROBOTS-TAG": b"nofollow"},
        {"Robots-Tag": "*;noindex"},
        {"robots-tag": ["examplebot;nofollow", "*;noarchive"]},
        {"Content-Type": "text/html", "X-Robots-Tag": []},
        {},
    ],
    ids=str,
)
def test_scrapy_headers_are_read_as_their_getlist_gives_them(given: dict[Any, Any]) -> None:
    """Scrapy's ``Headers`` are read from the dictionary's own entries (their
    layout, checked here on every Scrapy version the matrix runs): every name
    gives what ``Headers.getlist`` gives; a mapping that keeps its names
    otherwise is read through its ``getlist``."""
    from scrapy.http import Headers

    from scrapy_rfc9309.parser._page_directives import header_values

    class LowerCased(Headers):  # keeps its names another way
        def normkey(self, key: str | bytes) -> bytes:
            return self._tobytes(key.lower())

    for headers in (Headers(given), LowerCased(given)):
        for name in ("X-Robots-Tag", "Robots-Tag", "Content-Type"):
            expected = [value.decode("latin-1") for value in headers.getlist(name)]
            assert header_values(headers, name) == expected, (type(headers), name)


# -- character references in attribute values (HTML decodes them) -------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        param('<meta name="r&#111;bots" content="nofollow">', {"nofollow"}, id="decimal"),
        param('<meta name="r&#x6F;bots" content="nofollow">', {"nofollow"}, id="hex"),
        param('<meta name="&#X72;obots" content="nofollow">', {"nofollow"}, id="hex-upper-x"),
        param('<meta name="&#82;OBOTS" content="nofollow">', {"nofollow"}, id="upper-case"),
        param("<meta name=r&#111;bots content=nofollow>", {"nofollow"}, id="unquoted"),
        param('<meta name="r&#111bots" content="nofollow">', {"nofollow"}, id="no-semicolon"),
        param('<meta name="example&#66;ot" content="noindex">', {"noindex"}, id="token"),
        param('<meta name="robots" content="no&#105;ndex, &#110;ofollow">', BOTH, id="content"),
        param('<meta name="robots" content="noindex&#44;nofollow">', BOTH, id="content-comma"),
        param('<meta name="r&amp;bots" content="noindex">', set(), id="other-name"),
        param('<meta name="r&#111;bot" content="noindex">', set(), id="not-the-name"),
    ],
)
def test_character_references_in_meta_attributes_are_decoded(head: str, expected: set[str]) -> None:
    """An HTML parser decodes character references in attribute values, so
    ``name="r&#111;bots"`` is a robots META tag (HTTP: The Definitive Guide
    ch. 9 robots META; HTML Living Standard 13.2.5.72, character reference state)."""
    assert meta(f"<html><head>{head}</head><body></body></html>") == expected


def test_named_reference_in_a_token_name() -> None:
    page = "<html><head><meta name='my&lowbar;bot' content='noindex'></head></html>"
    assert meta(page, token="my_bot") == NOINDEX


def test_references_do_not_use_up_the_meta_tag_limit() -> None:
    """``&amp;`` / ``&#39;`` in links and descriptions are not places where
    the name can be: a robots META tag after thousands of them is read."""
    links = "".join(f'<link href="/a?x=1&#38;y={i}" title="it&#39;s">' for i in range(3000))
    body = f"<html><head>{links}<meta name='r&#111;bots' content='noindex'></head></html>"
    assert meta(body) == NOINDEX


def test_many_references_in_meta_tags_stay_linear() -> None:
    """Each tag is read once, whatever the number of references in it."""
    import time

    tag = '<meta name="' + "&#120;" * 600 + '" content="noindex">'
    body = "<html><head>" + tag * 60 + "</head></html>"
    started = time.process_time()
    assert meta(body) == set()
    assert time.process_time() - started < 1.0


def test_usage_signals_read_tdm_policy_header_and_meta_as_written() -> None:
    """TDMRep final report, "TDM Metadata in HTML Content": "`tdm-policy` is
    expressed as value of the `name` attribute of a second `meta` element"; the
    header carries it too. A URL: case kept, not split at commas, entities decoded."""
    body = (
        b'<html><head><META NAME="TDM-Policy" CONTENT="https://Ex.com/A,B?x=1&amp;Y=2">'
        b'<meta name="tdm-reservation" content="1"></head><body>'
        b'<meta name="tdm-policy" content="https://late/"></body>'
    )
    headers = {"Content-Type": "text/html", "TDM-Policy": "https://H/Pol.json"}
    assert read_usage_signals(200, headers, body) == [
        ("tdm-policy header", "https://H/Pol.json"),
        ('<meta name="tdm-policy">', "https://Ex.com/A,B?x=1&Y=2"),
        ('<meta name="tdm-reservation">', "1"),
    ]


# -- Robots-Tag (draft-illyes-repext-03) --------------------------------------------------


def robots_tag(*values: str, token: str = "ExampleBot", also: tuple[str, ...] = ()) -> Any:
    pairs = [("Robots-Tag", value) for value in values]
    return read_page_directives("http://x/", 200, pairs, b"", token, now=NOW, also=also)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        param(["*;noindex;nosnippet"], {"noindex", "nosnippet"}, id="repext-global-token"),
        param(["ExampleBot;noindex"], {"noindex"}, id="repext-product-token"),
        param(["examplebot;nosnippet"], {"nosnippet"}, id="repext-token-any-case"),
        param(["OtherBot;noindex"], set(), id="repext-other-token"),
        param(["*;nosnippet, ExampleBot;noindex"], {"noindex", "nosnippet"}, id="repext-union"),
        param(["*;nosnippet", "ExampleBot;noindex"], {"noindex", "nosnippet"}, id="repext-lines"),
        param(
            ['*;max-snippet=50;unavailable_after="2020-01-01"'],
            {"max-snippet:50", "unavailable_after: 2020-01-01", "noindex"},
            id="repext-values",
        ),
        param(["*;noindex=?0"], set(), id="repext-false-states-nothing"),
        param(["*;NOINDEX"], set(), id="repext-not-a-list-ignored-whole"),
        param(["noindex, nofollow"], set(), id="repext-x-robots-tag-syntax-is-no-token"),
    ],
)
def test_robots_tag_structured_field(values: list[str], expected: set[str]) -> None:
    """draft-illyes-repext-03: "The `robots-tag` field is a List as defined in
    {{STRUCTURED-FIELD-VALUES}}. Each member of the List is an Item representing a
    product token. Rules ... are defined as Parameters of that Item." The token is
    ours or ``*``; "the implementor MUST apply the union of all restrictive rules";
    a value that does not parse as a List (an uppercase key) is ignored whole."""
    assert set(robots_tag(*values).directives) == expected


def test_robots_tag_beside_x_robots_tag_and_sources() -> None:
    """The draft: "For historical reasons, implementors SHOULD also support the
    experimental field name `X-Robots-Tag`": both are read, and each directive
    names its field (and the token it was addressed to)."""
    pairs = [
        ("X-Robots-Tag", "nofollow"),
        ("Robots-Tag", "*;nosnippet, examplebot;noindex"),
        ("Robots-Tag", "GPTBot;noarchive"),
    ]
    page = read_page_directives("http://x/", 200, pairs, b"", "ExampleBot", also=("GPTBot",))
    assert page.directives == {"nofollow", "nosnippet", "noindex", "noarchive"}
    assert page.sources["nofollow"] == ("X-Robots-Tag",)
    assert page.sources["nosnippet"] == ("Robots-Tag",)
    assert page.sources["noindex"] == ("Robots-Tag: examplebot",)
    assert page.sources["noarchive"] == ("Robots-Tag: gptbot",)
    assert page.noindex and page.nofollow and page.noarchive


def test_robots_tag_draft_example_is_read_leniently() -> None:
    """LENIENT(robots-tag-empty-parameter): the draft's own example, ``Robots-Tag:
    *;noindex;nosnippet, ExampleBot;``, ends a member with a ``;`` no parameter
    follows, which RFC 9651 does not allow; it is read as the draft deserialises
    it ("ExampleBot" = []), and the reading is recorded."""
    page = robots_tag("*;noindex;nosnippet, ExampleBot;")
    assert page.directives == {"noindex", "nosnippet"}
    assert page.lenient == {"robots-tag-empty-parameter"}
    assert robots_tag("*;noindex").lenient == frozenset()


def test_robots_tag_parsing_floor_and_limits() -> None:
    """The draft: "The parsing limit MUST be at least 8 kibibytes": a value of 8 KiB
    with ``noindex`` last is read whole; a value past it is cut, and the limit is
    named (``truncated``) as X-Robots-Tag's is."""
    last = ", ExampleBot;noindex"
    filler = "*;" + "x" * (MAX_HEADER_BYTES - len(last) - 2)
    value = filler + last
    assert len(value.encode()) == MAX_HEADER_BYTES == 8 * 1024
    page = robots_tag(value)
    assert page.noindex and page.truncated == frozenset()
    cut = robots_tag("*;" + "x" * MAX_HEADER_BYTES + last)
    assert not cut.noindex and cut.truncated == {"MAX_HEADER_BYTES"}
    many = robots_tag(*["*;nosnippet"] * (MAX_HEADER_VALUES + 1))
    assert many.truncated == {"MAX_HEADER_VALUES"}


@pytest.mark.parametrize("header", ["X-Robots-Tag", "Robots-Tag"])
def test_a_header_value_cut_at_8_kib_is_read_to_its_last_whole_member(header: str) -> None:
    """A value longer than the 8 KiB read is cut after its last whole member: the
    member the limit falls in is not read at all, never read in part
    (``max-snippet=500`` read as ``max-snippet:50``, ``nosnippet`` as ``nosnippe``)."""
    from scrapy_rfc9309.parser._directives import MAX_HEADER_BYTES
    from scrapy_rfc9309.parser._page_directives import read_page_directives

    member, last = (
        ("nosnippet", "max-snippet:500")
        if header == "X-Robots-Tag"
        else ("o;nosnippet", "*;max-snippet=500")
    )
    value = ", ".join([member] * 2000)
    cut_at = value.rfind(", ", 0, MAX_HEADER_BYTES - 5) + 2
    value = value[:cut_at] + last + ", " + ", ".join([member] * 10)
    assert cut_at < MAX_HEADER_BYTES < cut_at + len(last)
    page = read_page_directives("http://a/", 200, [(header, value)], b"", "ExampleBot")
    assert not any(
        d.startswith(("max-snip", "nosnippe")) and d not in ("nosnippet",) for d in page.directives
    )
    assert "max-snippet:500" not in page.directives and "max-snippet:50" not in page.directives


def test_a_robots_tag_that_is_no_list_is_ignored_and_said() -> None:
    """draft-illyes-repext-03: the field is "a List as defined in
    {{STRUCTURED-FIELD-VALUES}}"; RFC 9651 4.2: a field that fails parsing is
    ignored. A malformed value states nothing, and the page's lenient forms name
    it, so its log line (and the command's ``lenient:``) says why."""
    from scrapy_rfc9309.parser._directives import ROBOTS_TAG_IGNORED
    from scrapy_rfc9309.parser._page_directives import read_page_directives

    page = read_page_directives(
        "http://a/", 200, [("Robots-Tag", "*;noindex, (((")], b"", "ExampleBot"
    )
    assert page.directives == frozenset()
    assert ROBOTS_TAG_IGNORED in page.lenient
    fine = read_page_directives("http://a/", 200, [("Robots-Tag", "*;noindex")], b"", "ExampleBot")
    assert fine.directives == {"noindex"} and ROBOTS_TAG_IGNORED not in fine.lenient

"""RFC 9309 conformance, written from the RFC text and its sources (the 1994
standard, the RFC's tables, the Mary's Antiques example). Test ids start with
the RFC section they check."""

from __future__ import annotations

import pytest

from scrapy_rfc9309 import RobotsTxt, Verdict
from scrapy_rfc9309.parser._lint import lint

param = pytest.param
#: How a tag google/robotstxt knows but does not support is named (lint).
AS_GOOGLE = "(as in Google's reference parser)"


def verdicts(body: str, agent: str, urls: list[str]) -> list[bool]:
    robots = RobotsTxt.parse(body)
    return [robots.allowed(url=url, agent=agent) for url in urls]


# -- 2.1 / 2.2.1: groups and product tokens ---------------------------------

GROUPS = [
    param(
        "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
        "user-agent: ExampleBot\ndisallow: /baz\n",
        "ExampleBot",
        {"/foo": False, "/bar": False, "/baz": False, "/qux": True},
        id="2.2.1-groups-naming-the-same-agent-are-merged",
    ),
    param(
        "user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n",
        "ExampleBot",
        {"/foo": False, "/bar": False, "/baz": True},
        id="2.2.1-no-matching-group-obeys-star",
    ),
    param(
        "user-agent: BazBot\ndisallow: /baz\n",
        "ExampleBot",
        {"/baz": True, "/": True},
        id="2.2.1-no-matching-group-and-no-star-allows-all",
    ),
    param(
        "user-agent: *\ndisallow: /\n\nuser-agent: examplebot\ndisallow: /x\n",
        "EXAMPLEBOT",
        {"/": True, "/x": False},
        id="2.2.1-agent-matching-is-case-insensitive",
    ),
    param(
        "user-agent: bot\ndisallow: /\n\nuser-agent: *\ndisallow: /star\n",
        "Googlebot",
        {"/": True, "/star": False},
        id="2.2.1-token-is-not-a-substring-match",
    ),
    param(
        "user-agent: foo\ndisallow: /\n",
        "FooBar",
        {"/": True},
        id="2.2.1-token-is-not-a-prefix-match",
    ),
    param(
        "user-agent: hedwig-news\ndisallow: /\n",
        "hedwig-news2",
        {"/": True},
        id="2.2.1-token-hedwig-news-does-not-govern-hedwig-news2",
    ),
    param(
        "user-agent: ExampleBot/1.0\ndisallow: /v\n",
        "ExampleBot",
        {"/v": False},
        id="2.2.1-user-agent-line-reduced-to-product-token",
    ),
    param(
        "user-agent: ExampleBot\ndisallow: /v\n",
        "ExampleBot/1.2 (+https://example.com/bot)",
        {"/v": False},
        id="2.2.1-caller-agent-reduced-to-leading-product",
    ),
    param(
        "user-agent: a\nuser-agent: b\ndisallow: /x\n",
        "b",
        {"/x": False},
        id="2.1-several-user-agent-lines-share-a-group",
    ),
    param(
        "user-agent: a\ndisallow: /x\nuser-agent: b\ndisallow: /y\n",
        "a",
        {"/x": False, "/y": True},
        id="2.1-user-agent-after-rule-starts-a-new-group",
    ),
    param(
        "disallow: /x\nuser-agent: *\ndisallow: /y\n",
        "a",
        {"/x": True, "/y": False},
        id="2.2.2-rules-before-first-user-agent-ignored",
    ),
    param(
        "user-agent: a\nsitemap: https://e.com/s.xml\nuser-agent: b\ndisallow: /x\n",
        "a",
        {"/x": False},
        id="2.2.4-sitemap-does-not-end-a-run-of-user-agent-lines",
    ),
    param(
        "user-agent: a\ncrawl-delay: 5\nuser-agent: b\ndisallow: /x\n",
        "a",
        {"/x": False},
        id="2.2.4-crawl-delay-does-not-end-a-run-of-user-agent-lines",
    ),
    param(
        "user-agent: a\nfoo: bar\nuser-agent: b\ndisallow: /x\n",
        "a",
        {"/x": False},
        id="2.2.4-unknown-line-does-not-end-a-run-of-user-agent-lines",
    ),
    param(
        "user-agent: a\ndisallow: /x\nsitemap: https://e.com/s.xml\ndisallow: /y\n",
        "a",
        {"/x": False, "/y": False},
        id="2.2.4-sitemap-does-not-end-a-group",
    ),
    param(
        "user-agent: a\ndisallow: /x\n\n\ndisallow: /y\n",
        "a",
        {"/y": False},
        id="2.1-blank-lines-do-not-end-a-group",
    ),
    param(
        "user-agent: a\n",
        "a",
        {"/": True},
        id="2.1-last-group-without-rules-allows-everything",
    ),
    param("", "a", {"/": True, "/x": True}, id="2.1-empty-file-allows-everything"),
]


@pytest.mark.parametrize(("body", "agent", "expected"), GROUPS)
def test_groups(body: str, agent: str, expected: dict[str, bool]) -> None:
    assert dict(zip(expected, verdicts(body, agent, list(expected)), strict=True)) == expected


# -- 2.2.2 / 2.2.3: matching ---------------------------------------------------

MATCHING = [
    param("disallow: /foo", "/foo/bar", False, id="2.2.2-prefix-match"),
    param("disallow: /foo", "/fo", True, id="2.2.2-shorter-path-does-not-match"),
    param("disallow: /Foo", "/foo", True, id="2.2.2-paths-are-case-sensitive"),
    param("disallow: /a\nallow: /a/b", "/a/b/c", True, id="2.2.2-longest-match-wins-allow"),
    param("allow: /a\ndisallow: /a/b", "/a/b/c", False, id="2.2.2-longest-match-wins-disallow"),
    param("disallow: /a\nallow: /a", "/a", True, id="2.2.2-allow-wins-a-tie"),
    param("allow: /a$\ndisallow: /a*", "/a", True, id="2.2.2-allow-wins-a-tie-wildcards"),
    param("disallow: /a/*/c", "/a/b/b/c", False, id="2.2.3-star-any-sequence"),
    param("disallow: /a/*/c", "/a/c", True, id="2.2.3-star-needs-its-slashes"),
    param("disallow: /*.php$", "/x/index.php", False, id="2.2.3-dollar-anchors-end"),
    param("disallow: /*.php$", "/x/index.php?a", True, id="2.2.3-dollar-query-is-path"),
    param("disallow: /x$", "/x/", True, id="2.2.3-dollar-exact"),
    param("allow: /$\ndisallow: /", "/", True, id="2.2.3-allow-root-only"),
    param("allow: /$\ndisallow: /", "/$x", False, id="2.2.3-dollar-has-no-literal-twin"),
    param("disallow: /a$b", "/a$b", False, id="2.2.3-dollar-mid-pattern-is-literal"),
    param("disallow: /*", "/anything", False, id="2.2.3-star-alone"),
    param("disallow: /a**b", "/axxb", False, id="2.2.3-repeated-stars"),
    param("disallow: *", "/anything", False, id="2.2.3-star-without-slash-matches-every-path"),
    param("disallow: *", "/", False, id="2.2.3-star-without-slash-matches-root"),
    param("disallow: /\nallow: *", "/x", True, id="2.2.2-allow-star-ties-slash-allow-wins"),
    param("disallow: *\nallow: /a", "/a", True, id="2.2.2-star-is-one-octet-specific"),
    param("allow: *\ndisallow: /a", "/a", False, id="2.2.2-longer-rule-beats-allow-star"),
    param("disallow: *$", "/x", False, id="2.2.3-star-dollar-matches-every-path"),
    param("disallow: /a*\nallow: /ab", "/abc", True, id="2.2.2-final-star-counts-allow-wins-tie"),
    param("allow: /a*\ndisallow: /ab", "/abc", True, id="2.2.2-final-star-rule-wins-the-tie"),
    param("allow: /a\ndisallow: /a*", "/abc", False, id="2.2.2-final-star-is-one-octet-more"),
    param("disallow: /a*\nallow: /abc", "/abc", True, id="2.2.2-longer-prefix-beats-star"),
    param("allow: /a*\ndisallow: /a**", "/abc", False, id="2.2.2-each-star-counts"),
    param("allow: /ab*\ndisallow: /a***", "/abc", False, id="2.2.2-stars-outweigh-a-longer-prefix"),
    param("disallow:", "/x", True, id="2.2.2-empty-rule-matches-nothing"),
    param("disallow: /", "/robots.txt", True, id="2.2.2-robots-txt-implicitly-allowed"),
    param("disallow: /a?b=1", "/a?b=1&c", False, id="2.2.2-query-is-part-of-path"),
    param("disallow: /a#b", "/a", False, id="2.2.2-hash-starts-a-comment"),
    param("disallow: /a", "/b#/a", True, id="2.2.2-fragment-is-not-matched"),
    param("disallow: /foo/bar?baz=quz", "/foo/bar?baz=quz", False, id="2.2.2-table-query"),
    param(
        "disallow: /foo/bar?baz=https://foo.bar",
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        True,
        id="2.2.2-table-reserved-escapes-stay-escaped",
    ),
    param(
        "disallow: /foo/bar?baz=https%3A%2F%2Ffoo.bar",
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        False,
        id="2.2.2-table-escaped-rule-escaped-url",
    ),
    param("disallow: /foo/bar/ツ", "/foo/bar/%E3%83%84", False, id="2.2.2-table-utf8-rule"),
    param("disallow: /foo/bar/%E3%83%84", "/foo/bar/ツ", False, id="2.2.2-table-utf8-url"),
    param("disallow: /foo/bar/%e3%83%84", "/foo/bar/%E3%83%84", False, id="2.2.2-hex-case"),
    param("disallow: /foo/bar/baz", "/foo/bar/%62%61%7A", False, id="2.2.2-table-unreserved"),
    param("disallow: /foo/bar/%62%61%7A", "/foo/bar/baz", False, id="2.2.2-unreserved-rule"),
    param("disallow: /a%2Fb", "/a/b", True, id="2.2.2-escaped-slash-is-not-slash"),
    param("disallow: /a/b", "/a%2Fb", True, id="2.2.2-slash-is-not-escaped-slash"),
    param(
        "disallow: /path/file-with-a-%2A.html",
        "https://www.example.com/path/file-with-a-*.html",
        False,
        id="2.2.3-percent-2A-is-literal-star",
    ),
    param(
        "disallow: /path/file-with-a-%2A.html",
        "/path/file-with-a-b.html",
        True,
        id="2.2.3-percent-2A-is-not-a-wildcard",
    ),
    param(
        "disallow: /path/foo-%24",
        "https://www.example.com/path/foo-$",
        False,
        id="2.2.3-percent-24-is-literal-dollar",
    ),
    param("disallow: /path/foo-%24", "/path/foo-", True, id="2.2.3-percent-24-not-an-anchor"),
    param("disallow: /dollar%24", "/dollar%24", False, id="2.2.2-percent-24-rule-matches-itself"),
    param("disallow: /dollar%24", "/dollar$", False, id="2.2.2-percent-24-rule-matches-dollar"),
    param("disallow: /a$b", "/a%24b", False, id="2.2.2-literal-dollar-url-escaped-or-not"),
    param("disallow: /a%2Ab", "/a%2ab", False, id="2.2.2-percent-2A-rule-matches-itself"),
    param("disallow: /a%2Ab", "/a*b", False, id="2.2.2-percent-2A-rule-matches-star"),
    param("disallow: /a%2Ab", "/axb", True, id="2.2.2-percent-2A-rule-is-no-wildcard"),
    param("disallow: /*%24$", "/x%24", False, id="2.2.3-percent-24-then-anchor"),
    param("disallow: /a%24$", "/a$x", True, id="2.2.3-percent-24-anchored"),
]


@pytest.mark.parametrize(("rules", "url", "expected"), MATCHING)
def test_matching(rules: str, url: str, expected: bool) -> None:
    robots = RobotsTxt.parse("user-agent: *\n" + rules + "\n")
    assert robots.allowed(url=url, agent="ExampleBot") is expected


def test_2_2_2_verdict_names_the_deciding_line() -> None:
    robots = RobotsTxt.parse(
        "# comment\nUser-agent: *\nDisallow: /private   # keep out\nAllow: /private/pub\n"
    )
    assert robots.check(url="https://e.com/private/a", agent="x") == Verdict(
        False, 3, "Disallow: /private"
    )
    assert robots.check(url="/private/pub/a", agent="x") == Verdict(True, 4, "Allow: /private/pub")
    assert robots.check(url="/public", agent="x") == Verdict(True, None, None)


def test_2_2_2_allow_wins_a_tie_whatever_the_order() -> None:
    for body in ("allow: /a\ndisallow: /a", "disallow: /a\nallow: /a"):
        verdict = RobotsTxt.parse("user-agent: *\n" + body).check(url="/a", agent="x")
        assert verdict.allowed and verdict.rule == "allow: /a"


def test_2_2_2_merged_groups_keep_their_own_line_numbers() -> None:
    robots = RobotsTxt.parse("user-agent: a\ndisallow: /x\n\nuser-agent: a\ndisallow: /xy\n")
    assert robots.check(url="/xyz", agent="a") == Verdict(False, 5, "disallow: /xy")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        param("https://example.com", "/", id="2.2.2-empty-path-is-root"),
        param("https://example.com?q=1", "/?q=1", id="2.2.2-query-without-path"),
        param("https://example.com:8080/a/b?c=d#e", "/a/b?c=d", id="2.2.2-port-and-fragment"),
    ],
)
def test_2_2_2_absolute_urls(url: str, expected: str) -> None:
    robots = RobotsTxt.parse(f"user-agent: *\ndisallow: {expected}$\n")
    assert robots.allowed(url=url, agent="x") is False


# -- the 1994 standard (seed 000) --------------------------------------------

NORobots_1994 = """# robots.txt for http://www.example.com/

User-agent: *
Disallow: /cyberworld/map/ # This is an infinite virtual URL space
Disallow: /tmp/ # these will soon disappear
Disallow: /foo.html
"""


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        param("/cyberworld/map/index.html", False, id="1994-example1-map"),
        param("/tmp/x", False, id="1994-example1-tmp"),
        param("/tmp", True, id="1994-example1-tmp-without-slash"),
        param("/foo.html", False, id="1994-example1-foo"),
        param("/index.html", True, id="1994-example1-other"),
    ],
)
def test_1994_example_1(url: str, expected: bool) -> None:
    assert RobotsTxt.parse(NORobots_1994).allowed(url=url, agent="webcrawler") is expected


def test_1994_example_2_cybermapper_exception() -> None:
    body = (
        "User-agent: *\nDisallow: /cyberworld/map/ # This is an infinite virtual URL space\n\n"
        "# Cybermapper knows where to go.\nUser-agent: cybermapper\nDisallow:\n"
    )
    robots = RobotsTxt.parse(body)
    assert robots.allowed(url="/cyberworld/map/x", agent="cybermapper")
    assert not robots.allowed(url="/cyberworld/map/x", agent="other")


def test_1994_example_3_go_away() -> None:
    robots = RobotsTxt.parse("# go away\nUser-agent: *\nDisallow: /\n")
    assert not robots.allowed(url="/", agent="any")
    assert not robots.allowed(url="/anything", agent="any")


# -- HTTP: The Definitive Guide, table 9-3 and Mary's Antiques (seed 004) ----------


@pytest.mark.parametrize(
    ("rule", "path", "matches"),
    [
        param("/tmp", "/tmp", True, id="table9-3-equal"),
        param("/tmp", "/tmpfile.html", True, id="table9-3-prefix"),
        param("/tmp", "/tmp/a.html", True, id="table9-3-prefix-dir"),
        param("/tmp/", "/tmp", False, id="table9-3-longer-rule"),
        param("/~fred/hi.html", "/%7Efred/hi.html", True, id="table9-3-tilde-escaped-url"),
        param("/%7Efred/hi.html", "/~fred/hi.html", True, id="table9-3-tilde-escaped-rule"),
        param("/%7efred/hi.html", "/%7Efred/hi.html", True, id="table9-3-escape-case"),
        param("/~fred/hi.html", "/~fred%2Fhi.html", False, id="table9-3-escaped-slash"),
    ],
)
def test_table_9_3(rule: str, path: str, matches: bool) -> None:
    robots = RobotsTxt.parse(f"user-agent: *\ndisallow: {rule}\n")
    assert robots.allowed(url=path, agent="x") is not matches


MARYS_ANTIQUES = """#####################################################################
# This is the robots.txt file for Mary's Antiques web site
#####################################################################

# Keep Suzy's robot out of all the dynamic URLs because it doesn't
# understand them, and out of all the private data, except for the
# small section Mary has reserved on the site for Suzy.

User-Agent: Suzy-Spider
Disallow: /dynamic
Allow: /private/suzy-stuff
Disallow: /private

# The Furniture-Finder robot was specially designed to understand
# Mary's antique store's furniture inventory program, so let it
# crawl that resource, but keep it out of all the other dynamic
# resources and out of all the private data.

User-Agent: Furniture-Finder
Allow: /dynamic/check-inventory
Disallow: /dynamic
Disallow: /private

# Keep everyone else out of the dynamic gateways and private data.

User-Agent: *
Disallow: /dynamic
Disallow: /private
"""

_MARY = "http://www.marys-antiques.com"


@pytest.mark.parametrize(
    ("url", "suzy", "furniture", "nosy"),
    [
        param(f"{_MARY}/", True, True, True, id="table9-4-root"),
        param(f"{_MARY}/index.html", True, True, True, id="table9-4-index"),
        param(f"{_MARY}/private/payroll.xls", False, False, False, id="table9-4-payroll"),
        param(f"{_MARY}/private/suzy-stuff/taxes.txt", True, False, False, id="table9-4-suzy"),
        param(f"{_MARY}/dynamic/buy-stuff?id=3546", False, False, False, id="table9-4-buy"),
        param(
            f"{_MARY}/dynamic/check-inventory?kitchen", False, True, False, id="table9-4-inventory"
        ),
    ],
)
def test_table_9_4_marys_antiques(url: str, suzy: bool, furniture: bool, nosy: bool) -> None:
    robots = RobotsTxt.parse(MARYS_ANTIQUES)
    assert robots.allowed(url=url, agent="Suzy-Spider") is suzy
    assert robots.allowed(url=url, agent="Furniture-Finder") is furniture
    assert robots.allowed(url=url, agent="NosyBot") is nosy
    assert robots.warnings == ()


# -- 2.5: limits, and the other records ----------------------------------------


def test_2_5_only_max_size_bytes_are_parsed() -> None:
    head = "user-agent: *\ndisallow: /early\n"
    body = head + "#" * (1000 - len(head) - 1) + "\ndisallow: /late\n"
    robots = RobotsTxt.parse(body, max_size=1000)
    assert robots.truncated
    assert not robots.allowed(url="/early", agent="x")
    assert robots.allowed(url="/late", agent="x")
    assert not RobotsTxt.parse(body).allowed(url="/late", agent="x")


def test_2_5_a_rule_cut_by_the_limit_is_dropped_not_guessed() -> None:
    body = "user-agent: *\nallow: /private/public\ndisallow: /private\n"
    cut_at = body.index("/public") + 2  # "allow: /p" would allow all of /private
    robots = RobotsTxt.parse(body.replace("disallow", "Disallow").encode(), max_size=cut_at)
    assert robots.check(url="/private/x", agent="x") == Verdict(True, None, None)
    assert any("parse limit" in message for _, message in robots.warnings)
    robots = RobotsTxt.parse("user-agent: *\ndisallow: /private\nallow: /private/pub", max_size=42)
    assert not robots.allowed(url="/private/pub", agent="x")


def test_2_5_default_limit_is_500_kib() -> None:
    body = b"user-agent: *\n" + b"#" * 511_000 + b"\ndisallow: /x\n"
    assert not RobotsTxt.parse(body).allowed(url="/x", agent="a")
    body = b"user-agent: *\n" + b"#" * 512_000 + b"\ndisallow: /x\n"
    assert RobotsTxt.parse(body).allowed(url="/x", agent="a")


def test_2_2_4_sitemaps_in_file_order_and_crawl_delay() -> None:
    robots = RobotsTxt.parse(
        "Sitemap: https://e.com/a.xml\nuser-agent: a\ncrawl-delay: 2.5\nuser-agent: b\n"
        "disallow: /x\nsitemap: https://e.com/b.xml\nuser-agent: *\ncrawl-delay: 1\n"
    )
    assert robots.sitemaps == ("https://e.com/a.xml", "https://e.com/b.xml")
    assert robots.crawl_delay("a") == 2.5
    assert robots.crawl_delay("B/1.0") == 2.5
    assert robots.crawl_delay("other") == 1.0
    assert RobotsTxt.parse("user-agent: *\ndisallow: /").crawl_delay("a") is None


def test_crawl_delay_invalid_values_are_ignored_with_a_warning() -> None:
    for value in ("-1", "nan", "inf", "soon"):
        robots = RobotsTxt.parse(f"user-agent: *\ncrawl-delay: {value}\n")
        assert robots.crawl_delay("a") is None
        assert robots.warnings[0][0] == 2


# -- Crawl-delay: the longest that applies (never shorter than a line addressed to the agent)


def _delays(body: str, *agents: str) -> list[float | None]:
    robots = RobotsTxt.parse(body)
    return [robots.crawl_delay(agent) for agent in agents]


def test_2_2_4_crawl_delay_of_merged_user_agent_lines_is_the_longest() -> None:
    """RFC 9309 2.2.4: "Crawlers MAY interpret other records that are not part of
    the robots.txt protocol -- for example, 'Sitemaps'"; such records do not end a
    group, so ``two`` below shares ``one``'s group. Neither agent waits less than a
    line addressed to it asks: the longest, 2 s (before: the first, 1 s)."""
    body = "User-agent: one\nCrawl-delay: 1\n\nUser-agent: two\nCrawl-delay: 2\n"
    assert _delays(body, "one", "two", "other") == [2.0, 2.0, None]
    findings = lint(RobotsTxt.parse(body))
    assert [line for line, _ in findings] == [1, 2, 4, 5]
    assert "Crawl-delay 1 is not used" in findings[1][1]
    assert "joins the group of line 1" in findings[2][1]
    assert "user-agent 'one' waits 2 s (Crawl-delay at line 5), not 1 s" in dict(findings)[1]


def test_2_2_1_crawl_delay_of_several_groups_for_one_agent_is_the_longest() -> None:
    """RFC 9309 2.2.1: "If there is more than one group matching the user-agent, the
    matching groups' rules MUST be combined into one group": of the Crawl-delays of
    those groups, the longest applies (before: the first group's)."""
    body = (
        "User-agent: a\nCrawl-delay: 1\nDisallow: /x\n\n"
        "User-agent: a\nCrawl-delay: 5\nDisallow: /y\n"
    )
    assert _delays(body, "a", "b") == [5.0, None]
    assert lint(RobotsTxt.parse(body)) == [
        (
            1,
            "user-agent 'a' also has the group of line 5, whose Crawl-delay 5 s is longer than "
            "this group's 1 s: RFC 9309 2.2.1 merges an agent's groups, and the longest "
            "Crawl-delay is used",
        )
    ]


def test_crawl_delay_crawler_commons_select_crawl_delay_group() -> None:
    """crawler-commons SimpleRobotRulesParserTest.testSelectCrawlDelayGroup: bingbot,
    msnbot and pinterestbot each with a Crawl-delay, then ``User-agent: *`` and its
    rules. crawler-commons expects bingbot 1 s, msnbot 2 s and any other agent none;
    RFC 9309 2.2.4 makes the four user-agent lines one group (no rule stands between
    them), so the rules bind all four (as crawler-commons agrees) and so does the
    longest Crawl-delay, 2 s."""
    body = (
        "User-Agent: bingbot\r\nCrawl-delay: 1\r\n\r\n"
        "User-Agent: msnbot\r\nCrawl-delay: 2\r\n\r\n"
        "User-Agent: pinterestbot\r\nCrawl-delay: 0.2\r\n\r\n"
        "User-agent: *\r\nDisallow: /login\r\n"
        "Sitemap: http://www.example.com/sitemap.xml\r\nDisallow: /assets/"
    )
    robots = RobotsTxt.parse(body)
    assert _delays(body, "bingbot", "msnbot", "pinterestbot", "anybot") == [2.0] * 4
    for agent in ("bingbot", "msnbot", "anybot"):
        assert not robots.allowed(url="http://www.example.com/login", agent=agent)
        assert not robots.allowed(url="http://www.example.com/assets/", agent=agent)
        assert robots.allowed(url="http://www.example.com/", agent=agent)
    assert robots.sitemaps == ("http://www.example.com/sitemap.xml",)
    waits = [line for line, text in lint(robots) if "waits 2 s" in text]
    assert waits == [1, 7, 10]  # bingbot (1 s), pinterestbot (0.2 s), * (none)


def test_crawl_delay_texting_robots_retrieve_crawl_delay() -> None:
    """texting_robots test_robot_retrieve_crawl_delay: agents A (42), B and C (420),
    D (-1.25, invalid), E (8), * (3600) and Zero (0) with no rule between them: one
    group (RFC 9309 2.2.4). texting_robots gives each the value after its own lines
    (A 42, C 420, D 8, Zero 0); here every agent waits the longest, 3600 s."""
    body = (
        "User-Agent: A\nCrawl-Delay: 42\n# A B and the other Agent ...\n"
        "User-Agent: B\nUser-Agent: C\nCrawl-Delay: 420\nUser-Agent: D\nCrawl-Delay: -1.25\n"
        "User-Agent: E\nCrawl-Delay: 8\nUser-Agent: *\nCRAWL-Delay : 3600\n"
        "User-Agent: Zero\nCrawl-Delay: 0"
    )
    assert _delays(body, "A", "B", "C", "D", "Zero", "other") == [3600.0] * 6


def test_crawl_delay_texting_robots_values() -> None:
    """texting_robots test_parser_crawl_delay and test_robot_crawl_delay_not_integer:
    ``60``, ``3.16`` and ``0.0`` are read; ``-1.618``, ``wait`` and bytes that are not
    UTF-8 are not (with a warning). A (1.0), B (4.2), C (invalid) are one group: 4.2 s."""
    for value, expected in (("60", 60.0), ("3.16", 3.16), ("0.0", 0.0), ("-1.618", None)):
        assert _delays(f"User-agent: *\n    crawl-delay  : {value}", "x") == [expected]
    assert _delays("User-agent: *\nCrawl-delay: wait", "x") == [None]
    body = b"User-Agent: A\nCrawl-Delay:1.0\nUser-Agent: B\nCrawl-Delay:4.2\n"
    body += b"User-Agent: C\nCrawl-Delay: \x41\xc2\xc3\xb1\x42"
    robots = RobotsTxt.parse(body)
    assert [robots.crawl_delay(agent) for agent in "ABC"] == [4.2, 4.2, 4.2]
    assert any(line == 6 and "crawl-delay" in text for line, text in robots.warnings)


# -- the API contract ---------------------------------------------------------------


def test_keyword_arguments_and_swapped_arguments_are_refused() -> None:
    robots = RobotsTxt.parse("user-agent: *\ndisallow: /")
    assert robots.allowed(url="https://e.com/", agent="ExampleBot") is False
    assert robots.allowed("https://e.com/", "ExampleBot") is False
    with pytest.raises(ValueError, match="swapped"):
        robots.allowed("ExampleBot", "https://e.com/")
    with pytest.raises(ValueError, match="looks like a URL"):
        robots.check(url="/x", agent="/x")
    with pytest.raises(TypeError):
        robots.check(url=b"/x", agent="a")  # type: ignore[arg-type]


def test_parse_accepts_bytes_and_str_and_rejects_bad_limits() -> None:
    for body in (b"user-agent: *\ndisallow: /x", "user-agent: *\ndisallow: /x"):
        assert not RobotsTxt.parse(body).allowed(url="/x", agent="a")
    with pytest.raises(ValueError, match="max_size"):
        RobotsTxt.parse(b"", max_size=-1)
    with pytest.raises(TypeError):
        RobotsTxt.parse(None)  # type: ignore[arg-type]


def test_2_2_2_denial_is_the_verdict_only_when_forbidden() -> None:
    robots = RobotsTxt.parse("user-agent: *\ndisallow: /x\nallow: /x/y\n")
    assert robots.denial(url="/x/z", agent="a") == Verdict(False, 2, "disallow: /x")
    assert robots.denial(url="/x/y", agent="a") is None
    assert robots.denial(url="/other", agent="a") is None


@pytest.mark.parametrize(
    "filler",
    [
        param(0, id="2.2.3-disallow-star-few-rules"),
        param(300, id="2.2.3-disallow-star-beside-hundreds-of-prefix-rules"),
        param(20, id="2.2.3-disallow-star-beside-wildcard-rules"),
    ],
)
def test_2_2_3_disallow_star_matches_every_path_whatever_the_index(filler: int) -> None:
    """A ``*`` pattern with no prefix matches every path (RFC 9309 2.2.3), in
    each prefix index and beside indexed wildcard rules."""
    others = "".join(f"allow: /x{i}*\nallow: /y{i}\nallow: /*z{i}*q\n" for i in range(filler))
    for star in ("disallow: *", "disallow: *\nallow: /keep"):
        robots = RobotsTxt.parse("user-agent: *\n" + others + star + "\n")
        for path in ("/", "/a", "/shop/item?x=1", "/%E3%83%84"):
            verdict = robots.check(url=path, agent="ExampleBot")
            assert not verdict.allowed and verdict.rule == "disallow: *", (filler, path)
    robots = RobotsTxt.parse("user-agent: *\n" + others + "disallow: /\nallow: *\n")
    assert robots.allowed(url="/a", agent="ExampleBot")


@pytest.mark.parametrize(
    ("line", "user_agent"),
    [
        param("MJ12bot", "MJ12bot/1.4.8 (+http://mj12bot.com)", id="2.2.1-name-keeps-digits"),
        param("360Spider", "360Spider", id="2.2.1-product-name-may-start-with-digits"),
        param(
            "archive.org_bot",
            "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)",
            id="2.2.1-product-name-keeps-dots",
        ),
        param(
            "ExampleBot",
            "Mozilla/5.0 (compatible; ExampleBot/0.1; https://www.example.com/bot.html)",
            id="2.2.1-rfc-example-user-agent-obeys-its-product",
        ),
        param("Scrapy", "Scrapy/2.19 (+https://scrapy.org)", id="2.2.1-scrapy-default-ua"),
    ],
)
def test_2_2_1_one_product_name_rule_for_lines_and_user_agents(line: str, user_agent: str) -> None:
    """A user-agent line and a whole User-Agent value reduce to the same name."""
    from scrapy_rfc9309.parser._agent import derive_product_token, product_token

    robots = RobotsTxt.parse(f"user-agent: {line}\ndisallow: /own\nuser-agent: *\ndisallow: /\n")
    assert not robots.allowed(url="/own", agent=user_agent)
    assert robots.allowed(url="/other", agent=user_agent)
    assert product_token(derive_product_token(user_agent)) == product_token(line)
    assert robots.groups_for(user_agent)[0].agents[0][1] == line.lower()


def test_2_2_1_derived_names_are_valid_tokens() -> None:
    from scrapy_rfc9309.parser._agent import derive_product_token, is_valid_token

    assert derive_product_token("MJ12bot/1.4.8 (...)") == "MJ12bot"
    assert derive_product_token("360Spider") == "360Spider"
    assert derive_product_token("archive.org_bot") == "archive.org_bot"
    assert all(is_valid_token(name) for name in ("MJ12bot", "360Spider", "archive.org_bot"))
    assert not is_valid_token("bad token") and not is_valid_token("a/b") and not is_valid_token("")


@pytest.mark.parametrize(
    ("line", "rules", "warnings"),
    [
        param("Disallow: /a#b", [(False, b"/a", 2)], [], id="2.2-comment-after-a-value"),
        param("Disallow: /a # b", [(False, b"/a", 2)], [], id="2.2-comment-after-blanks"),
        param("Disallow:#", [(False, b"", 2)], [], id="2.2-comment-as-the-value"),
        param("  # indented", [], [], id="2.2-indented-comment-line"),
        param("\tAllow: /t", [(True, b"/t", 2)], [], id="2.2-blanks-before-a-key"),
        param(
            "Dis#allow: /x",
            [],
            [(2, "not a directive, ignored: 'Dis'")],
            id="2.2-comment-inside-a-key",
        ),
        param(
            "Noindex: /n",
            [],
            [
                (
                    2,
                    f"known but unsupported directive 'Noindex' ignored {AS_GOOGLE}",
                )
            ],
            id="2.2.4-other-record",
        ),
        param(
            "  Host: x#y",
            [],
            [
                (
                    2,
                    f"known but unsupported directive 'Host' ignored {AS_GOOGLE}",
                )
            ],
            id="2.2.4-blanks-first",
        ),
        param(
            "Noodle: /n", [], [(2, "unknown directive 'Noodle' ignored")], id="2.2.4-unknown-record"
        ),
        param(
            "Dissallow: /m",
            [(False, b"/m", 2)],
            [(2, "misspelt directive 'Dissallow' read as 'disallow'")],
            id="lenient-misspelling-read-once",
        ),
        param(
            "Disallow /tmp",
            [(False, b"/tmp", 2)],
            [(2, "missing ':' after 'Disallow'")],
            id="lenient-missing-colon",
        ),
    ],
)
def test_2_2_lines_read_alike_the_first_time_and_after(
    line: str, rules: list[tuple[bool, bytes, int]], warnings: list[tuple[int, str]]
) -> None:
    """RFC 9309 2.2: a comment runs from "#" to the line's end (removed from
    the body in one pass before the lines are read, or line by line when
    most lines have one), blanks before a key
    are allowed, other records are ignored (2.2.4) with a warning. Keys and
    agents read once are remembered across files: a second file reads each
    line as the first did, warnings included."""
    from scrapy_rfc9309.parser._groups import _split_lines, group_all
    from scrapy_rfc9309.parser._lines import Warnings

    # A "#" on most lines: cut line by line; on few (blank lines after):
    # removed from the body in one pass.
    for blanks in (0, 20):
        body = f"User-agent: Some-Bot\n{line}\nSitemap: http://h/s.xml#x\n{chr(10) * blanks}"
        assert _split_lines(body.encode())[1] is ("#" in line and blanks == 0)
        for _ in range(2):
            collector = Warnings()
            grouping = group_all(body.encode(), collector)
            assert grouping.rules(grouping.groups_for("some-bot")) == rules
            assert collector.items == warnings
            assert grouping.sitemaps == ("http://h/s.xml",)
            assert list(grouping.by_token) == ["some-bot"]

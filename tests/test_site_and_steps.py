"""Site keys (RFC 9309 2.3: one robots.txt per scheme + authority) and
parsing in steps (a 500 KiB file must not hold Scrapy's reactor)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.parser._steps import run_to_end
from scrapy_rfc9309.sites._site import exempt_by_meta, robots_url, site_of


@pytest.mark.parametrize(
    ("url", "site", "robots"),
    [
        ("http://Example.COM./a", "http://example.com:80", "http://example.com/robots.txt"),
        ("http://example.com:80/a", "http://example.com:80", "http://example.com/robots.txt"),
        ("https://example.com/a", "https://example.com:443", "https://example.com/robots.txt"),
        (
            "https://example.com:8443/a",
            "https://example.com:8443",
            "https://example.com:8443/robots.txt",
        ),
        ("http://user:pw@example.com/a", "http://example.com:80", "http://example.com/robots.txt"),
        ("http://[::1]:8080/a", "http://[::1]:8080", "http://[::1]:8080/robots.txt"),
    ],
)
def test_2_3_site_is_scheme_host_and_port(url: str, site: str, robots: str) -> None:
    assert site_of(url) == site
    assert robots_url(site) == robots


def test_2_3_http_and_https_of_one_host_are_two_sites() -> None:
    assert site_of("http://example.com/") != site_of("https://example.com/")


def test_urls_without_a_host_have_no_site() -> None:
    assert site_of("http:///x") is None
    assert site_of("http://example.com:notaport/") is None


def test_2_5_a_large_file_parses_in_many_small_steps_to_the_same_result() -> None:
    rules = "".join(f"Disallow: /p{i}/*.html$\nAllow: /p{i}/public\n" for i in range(12_000))
    body = ("User-agent: *\n" + rules).encode()[:512_000]
    steps = RobotsTxt.parse_in_steps(body, agent="ExampleBot")
    count = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            stepped = done.value
            break
        count += 1
    assert count >= 40  # about 12,000 lines and 12,000 rules, 500 per step
    whole = run_to_end(RobotsTxt.parse_in_steps(body))
    for url in ("/p7/a.html", "/p7/public", "/p11999/x", "/q"):
        assert stepped.check(url=url, agent="ExampleBot") == whole.check(url=url, agent="x")


def test_2_2_1_compact_form_an_unknown_token_shares_the_star_rules_without_a_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spider rotating User-Agents: every token without a group of its own
    is governed by ``*`` (RFC 9309 2.2.1) and costs no parse of the body."""
    from scrapy_rfc9309.parser._compact import CompactRobots

    body = b"User-agent: *\nDisallow: /private\n\nUser-agent: OtherBot\nDisallow: /other\n"
    robots = RobotsTxt.parse(body)
    robots.check(url="/", agent="First")  # the fetcher compiles the first agent's rules
    compact = CompactRobots(robots)
    parses = []
    real_parse = RobotsTxt.parse

    def counting_parse(*args: object, **kwargs: object) -> RobotsTxt:
        parses.append(1)
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(RobotsTxt, "parse", counting_parse)
    for number in range(1000):  # far more agents than the 64 agent strings remembered
        agent = f"Rotating{number}/1.0 (+https://example.com)"
        assert not compact.allowed(url="/private/x", agent=agent)
        assert compact.allowed(url="/other", agent=agent)
    assert parses == []
    for agent in ("OtherBot", "otherbot/2.0", "Mozilla/5.0 (compatible; OtherBot/1.0)"):
        assert not compact.allowed(url="/other", agent=agent)
        assert compact.allowed(url="/private/x", agent=agent)
    assert len(parses) == 1  # once per token with a group of its own
    assert compact.check(url="/other", agent="OtherBot") == robots.check(
        url="/other", agent="OtherBot"
    )


@pytest.mark.parametrize("others", [1, 20], ids=["few-tokens", "many-tokens"])
def test_2_2_1_parsed_file_keeps_one_matcher_per_token_once_its_groups_are_dropped(
    others: int,
) -> None:
    """Once its groups are dropped a parsed file keeps only the tokens that
    have groups (a small set) and one matcher map, agent strings and tokens
    alike: each agent still gets its own group's rules (RFC 9309 2.2.1), and
    ``compiled_matchers`` names tokens only."""
    body = b"User-agent: *\nDisallow: /private\n\n" + b"".join(
        b"User-agent: Other%dBot\nDisallow: /other%d\n\n" % (n, n) for n in range(others)
    )
    robots = RobotsTxt.parse(body)
    for agent in ("Mozilla/5.0 (compatible; Other0Bot/1.0)", "other0bot", "Rotating/1.0"):
        robots.allowed(url="/", agent=agent)
    assert set(robots.compiled_matchers()) == {"other0bot", "*"}
    for number in range(200):  # far more agent strings than are remembered
        agent = f"Rotating{number}/1.0"
        assert not robots.allowed(url="/private/x", agent=agent)
        assert robots.allowed(url="/other0", agent=agent)
        assert robots.matcher(agent) is robots.compiled_matchers()["*"]
    last = f"Other{others - 1}Bot"
    assert not robots.allowed(url=f"/other{others - 1}", agent=last)
    assert robots.allowed(url="/private/x", agent=last)
    assert not robots.allowed(url="/other0", agent="OTHER0BOT/2")
    assert robots.tokens == {"*"} | {f"other{n}bot" for n in range(others)}
    assert set(robots.compiled_matchers()) == {"*", "other0bot", last.lower()}


def test_2_2_1_agent_strings_are_remembered_however_many_tokens_are_compiled() -> None:
    """Tokens compiled and agent strings share one map: a file whose 100
    tokens have all been asked for still remembers the matcher of up to
    AGENT_CACHE_SIZE whole User-Agent values (each is reduced to its token
    once), with the same verdicts."""
    from scrapy_rfc9309.parser._verdicts import AGENT_CACHE_SIZE

    body = b"".join(b"User-agent: Bot%d\nDisallow: /bot%d\n\n" % (n, n) for n in range(100))
    robots = RobotsTxt.parse(body)
    for number in range(100):
        assert not robots.allowed(url=f"/bot{number}", agent=f"bot{number}")
    agents = [f"Mozilla/5.0 (compatible; Bot{n}/1.0)" for n in range(AGENT_CACHE_SIZE)]
    for number, agent in enumerate(agents):
        assert not robots.allowed(url=f"/bot{number}", agent=agent)
        assert robots.allowed(url=f"/bot{number + 1}", agent=agent)
    assert all(agent in robots._by_agent for agent in agents)
    assert len(robots.compiled_matchers()) == 100


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"User-agent: *\nDisallow:\n",
        b"User-agent: *\nAllow:\nCrawl-delay: 5\n\nUser-agent: OtherBot\nDisallow:\n",
        b"# only comments\nSitemap: https://example.com/sitemap.xml\n",
    ],
)
def test_2_2_2_a_file_without_a_pattern_shares_one_matcher_that_no_check_changes(
    body: bytes,
) -> None:
    """RFC 9309 2.2.2: an empty Disallow (or Allow) matches nothing, so a
    file with no rule that has a pattern allows every path to every agent:
    each agent gets the one shared matcher, in one go and in steps, and no
    check changes it (it is compiled: no counter, no scan)."""
    from scrapy_rfc9309.parser._matcher import ALLOWING_ALL as shared

    def state() -> dict[str, object]:
        return {name: getattr(shared, name, None) for name in type(shared).__slots__}

    before = state()
    robots = RobotsTxt.parse(body)
    stepped = run_to_end(RobotsTxt.parse_in_steps(body, agent="OtherBot"))
    paths = ["/", "/x", "/./private/a", "//a", "/%7Ea?q=1", "/robots.txt"] * 5
    for agent in ("OtherBot", "ExampleBot", "Mozilla/5.0 (compatible; ExampleBot/1.0)"):
        assert robots.matcher(agent) is shared
        assert stepped.matcher(agent) is shared
        for path in paths:
            assert robots.check(url=path, agent=agent) == (True, None, None)
            assert robots.denial(path, agent) is None
            assert stepped.allowed(url=f"https://example.com{path}", agent=agent)
    assert state() == before


def test_2_3_a_malformed_url_has_no_site_and_never_raises() -> None:
    for url in ("http://[::1", "http://[bad/x", "http://h:99999/", "https://"):
        assert site_of(url) is None


_URL_PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "HTTP://",
        " http://",
        "ftp://",
        "example.com",
        "Ex.COM.",
        "[::1]",
        ":80",
        ":443",
        ":8080",
        ":x",
        "u:p@",
        "/",
        "?",
        "#",
        "\t",
        "\n",
        "\\",
        " ",
        "a",
        "%41",
        ".",
    ]
)


@given(st.lists(_URL_PIECES, max_size=8).map("".join))
def test_2_3_the_site_of_a_url_read_twice_is_the_site_read_in_full(url: str) -> None:
    """The memo of sites by ``scheme://authority`` (a crawl reads each request's
    site several times) answers what reading the whole URL answers, first and
    second time (RFC 9309 2.3: the site is scheme, host and port)."""
    from scrapy_rfc9309.sites._site import _site_of

    assert site_of(url) == _site_of(url)
    assert site_of(url) == _site_of(url)
    assert site_of(url + "/more?q#f") == _site_of(url + "/more?q#f")


@pytest.mark.parametrize(
    ("meta", "url", "exempt"),
    [
        ({}, "http://a.example/x", False),
        ({"dont_obey_robotstxt": False}, "http://a.example/x", False),
        ({"dont_obey_robotstxt": True}, "http://a.example/x", True),
        # redirected within the site it was sent to: still exempt
        (
            {"dont_obey_robotstxt": True, "redirect_urls": ["http://a.example/old"]},
            "http://a.example:80/new",
            True,
        ),
        # redirected to another site (another host, scheme or port): checked
        (
            {"dont_obey_robotstxt": True, "redirect_urls": ["http://a.example/old"]},
            "http://b.example/new",
            False,
        ),
        (
            {"dont_obey_robotstxt": True, "redirect_urls": ["http://a.example/old"]},
            "https://a.example/new",
            False,
        ),
        ({"dont_obey_robotstxt": True, "redirect_urls": "not a list"}, "http://b.example/", True),
    ],
)
def test_dont_obey_robotstxt_exempts_the_site_the_request_was_sent_to(
    meta: dict[str, object], url: str, exempt: bool
) -> None:
    assert exempt_by_meta(meta, url) is exempt


def test_a_bounded_dictionary_forgets_its_oldest_entry_first() -> None:
    from scrapy_rfc9309.sites._bounded import put_bounded

    kept: dict[str, int] = {}
    for number, key in enumerate("abc"):
        put_bounded(kept, key, number, 3)
    put_bounded(kept, "b", 10, 3)  # a key kept: nothing forgotten
    assert kept == {"a": 0, "b": 10, "c": 2}
    put_bounded(kept, "d", 3, 3)
    assert kept == {"b": 10, "c": 2, "d": 3}

"""``ROBOTSTXT_ALSO_OBEY`` (several product tokens, RFC 9309 2.2.1 each by its own
groups, as Google's ``AllowedByRobots(robots, user_agents, url)`` and
StormCrawler's ``http.robots.agents``), ``ROBOTS_META_NOAI`` and the command's
retired purposes, against real local sites."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components.command._command import EXIT_DISALLOWED, EXIT_ERROR
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

from .conftest import crawl
from .server import html_page, page_with_headers, text
from .test_command import json_lines, scrapy
from .test_meta_middleware import ADDON_ONLY, meta_crawl
from .test_usage import usage_crawl

ROBOTS = (
    "User-agent: *\n"  # 1
    "Allow: /\n"  # 2
    "\n"
    "User-agent: GPTBot\n"  # 4
    "Disallow: /no-gpt/\n"  # 5
    "Crawl-delay: 3\n"  # 6
    "\n"
    "User-agent: CCBot\n"  # 8
    "Disallow: /no-cc/\n"  # 9
)
ALSO = {"ROBOTSTXT_USER_AGENT": "ExampleBot", "ROBOTSTXT_ALSO_OBEY": ["GPTBot", "CCBot"]}


@deferred_f_from_coro_f
async def test_2_2_1_a_url_is_fetched_only_if_every_listed_token_is_allowed(sites) -> None:
    """RFC 9309 2.2.1, per token: ExampleBot falls back to ``*`` (allowed), GPTBot
    and CCBot obey their own groups; a URL any of them refuses is not fetched."""
    site = sites(routes={"/robots.txt": text(ROBOTS)}, default=text("page"))
    urls = [site.url("/ok"), site.url("/no-gpt/a"), site.url("/no-cc/a")]
    spider, stats = await crawl(urls, ALSO)
    assert sorted(site.hits) == ["/ok", "/robots.txt"]
    gpt = spider.dropped[site.url("/no-gpt/a")]
    assert 'line 5 for GPTBot (ROBOTSTXT_ALSO_OBEY): "Disallow: /no-gpt/"' in gpt
    assert (
        'line 9 for CCBot (ROBOTSTXT_ALSO_OBEY): "Disallow: /no-cc/"'
        in (spider.dropped[site.url("/no-cc/a")])
    )
    assert stats["robotstxt/forbidden/rule"] == 2
    assert stats["robotstxt/forbidden/also_obey/GPTBot"] == 1
    assert stats["robotstxt/forbidden/also_obey/CCBot"] == 1
    # without the setting, only the crawl's own token is obeyed
    site.hits.clear()
    _, stats = await crawl(urls, {"ROBOTSTXT_USER_AGENT": "ExampleBot"})
    assert sorted(site.hits) == ["/no-cc/a", "/no-gpt/a", "/ok", "/robots.txt"]


@deferred_f_from_coro_f
async def test_crawl_delay_is_the_longest_among_the_tokens_obeyed(sites) -> None:
    """The extension's floor: the longest Crawl-delay of the tokens obeyed (GPTBot's)."""
    from .test_addon_extension import ADDON_ONLY as EXTENSION_ON
    from .test_addon_extension import _gaps

    robots = (
        "User-agent: *\nAllow: /\nCrawl-delay: 0.1\n\n"
        "User-agent: GPTBot\nAllow: /\nCrawl-delay: 0.6\n"
    )
    site = sites(routes={"/robots.txt": text(robots)}, default=text("page"))
    paths = {f"/p{i}" for i in range(3)}
    settings = {**EXTENSION_ON, **ALSO, "ROBOTSTXT_CRAWL_DELAY": True}
    await crawl([site.url(p) for p in sorted(paths)], settings)
    gaps = _gaps(site, paths)
    assert min(gaps) >= 0.55, gaps


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("GPTBot,CCBot", ("GPTBot", "CCBot")),
        (" GPTBot , CCBot, ", ("GPTBot", "CCBot")),
        (["Google-Extended", "google-extended"], ("Google-Extended",)),
        ([], ()),
        # reduced to its product name with a warning, as ROBOTSTXT_USER_AGENT is
        ("GPTBot/1.0", ("GPTBot",)),
        (["CCBot/2.0 (+https://commoncrawl.org)"], ("CCBot",)),
    ],
)
def test_also_obey_setting_is_read_as_a_list_of_tokens(value: Any, expected: tuple) -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_ALSO_OBEY": value})
    assert RobotsTxtSettings.from_settings(crawler.settings).also_obey == expected


@pytest.mark.parametrize("value", [["CC Bot"], "*", [3], {"GPTBot": 1}, ["/1.0"]])
def test_2_2_1_also_obey_refuses_what_is_not_a_product_token(value: Any) -> None:
    crawler = get_crawler(settings_dict={"ROBOTSTXT_ALSO_OBEY": value})
    with pytest.raises(SettingError, match="ROBOTSTXT_ALSO_OBEY"):
        RobotsTxtSettings.from_settings(crawler.settings)


@deferred_f_from_coro_f
async def test_page_directives_addressed_to_a_listed_token_apply(sites, tmp_path) -> None:
    """HTTP: The Definitive Guide ch. 9: ``<meta name="GPTBot" content="noindex">``
    and ``X-Robots-Tag: CCBot: nofollow, noarchive`` apply to a crawl that also
    obeys GPTBot and CCBot (the meta middleware and the HTTP cache policy)."""
    xrt = [(b"X-Robots-Tag", b"CCBot: nofollow, noarchive")]
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            "/noindex": text(
                html_page('<meta name="GPTBot" content="noindex">'), 200, b"text/html"
            ),
            "/nofollow": page_with_headers(html_page("", ["/next"]), xrt),
        },
        default=text("<p>next</p>", content_type=b"text/html"),
    )
    urls = [site.url("/noindex"), site.url("/nofollow")]
    settings = {
        **ADDON_ONLY,
        **ALSO,
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "cache"),
    }
    _spider, items, stats = await meta_crawl(urls, settings)
    assert items == [site.url("/nofollow")]  # /noindex's item dropped
    assert site.count("/next") == 0  # /nofollow's link not followed
    assert stats["robotsmeta/nofollow"] == 1 and stats["robotsmeta/noindex"] == 1
    assert stats["robotsmeta/noarchive"] == 1
    site.hits.clear()
    await meta_crawl(urls, settings)
    assert site.count("/nofollow") == 1  # noarchive for CCBot: never served from the cache
    assert site.count("/noindex") == 0
    # without the setting, none of them applies
    site.hits.clear()
    _, items, _ = await meta_crawl(urls, {"ROBOTSTXT_USER_AGENT": "ExampleBot"})
    assert sorted(items) == sorted([*urls, site.url("/next")])


@deferred_f_from_coro_f
async def test_command_names_the_listed_token_that_refuses(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": text(ROBOTS)})
    url = site.url("/no-gpt/a")
    args = ("--agent", "ExampleBot", "-s", "ROBOTSTXT_ALSO_OBEY=GPTBot,CCBot")
    output, code = await scrapy(url, *args, cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output
    assert 'DISALLOWED for GPTBot (ROBOTSTXT_ALSO_OBEY) by line 5: "Disallow: /no-gpt/"' in output
    assert "also obey:   CCBot: allowed" in output
    assert "crawl-delay: 3.0 s" in output
    output, code = await scrapy(url, *args, "--json", cwd=tmp_path)
    (answer,) = json_lines(output)
    assert (answer["verdict"], answer["decided_by"], answer["line"]) == ("disallowed", "GPTBot", 5)
    assert [other["agent"] for other in answer["also_obey"]] == ["GPTBot", "CCBot"]
    output, code = await scrapy(url, "-s", "ROBOTSTXT_ALSO_OBEY=GPTBot/1.0", cwd=tmp_path)
    assert code == EXIT_DISALLOWED, output  # read as GPTBot, with a warning
    assert "ROBOTSTXT_ALSO_OBEY 'GPTBot/1.0' is not a product token" in output
    output, code = await scrapy(url, "-s", "ROBOTSTXT_ALSO_OBEY=CC Bot", cwd=tmp_path)
    assert code == EXIT_ERROR and "ROBOTSTXT_ALSO_OBEY" in output


_NOAI_PAGES = {
    "/meta-noai": ([], '<meta name="robots" content="noai">'),
    "/xrt-noimageai": ([(b"X-Robots-Tag", b"noimageai")], ""),
}


@pytest.mark.parametrize("path", sorted(_NOAI_PAGES))
@deferred_f_from_coro_f
async def test_robots_meta_noai_refuses_train_ai(sites, path: str) -> None:
    """``ROBOTS_META_NOAI`` (de facto, not a standard): ``noai`` / ``noimageai`` in
    the robots META tag or X-Robots-Tag refuse ``train-ai``: the page's items are
    dropped; without the setting they are kept."""
    headers, head = _NOAI_PAGES[path]
    site = sites(
        routes={
            "/robots.txt": text("User-agent: *\nAllow: /\n"),
            path: page_with_headers(html_page(head), headers),
        }
    )
    purposes: dict[str, Any] = {"ROBOTSTXT_PURPOSES": ["train-ai"]}
    spider, items, stats = await usage_crawl(
        [site.url(path)], {**purposes, "ROBOTS_META_NOAI": True}
    )
    assert items == [] and stats["robotsmeta/usage"] == 1
    assert spider.usage[site.url(path)].get("train-ai").allowed is False
    _, items, _ = await usage_crawl([site.url(path)], purposes)
    assert items == [site.url(path)]


@pytest.mark.parametrize("name", ["bots", "train-genai"])
@deferred_f_from_coro_f
async def test_command_retired_purpose_says_what_replaced_it(tmp_path, name: str) -> None:
    """draft-ietf-aipref-vocab-08 has neither: the same message as the setting."""
    from scrapy_rfc9309.parser._usage import RETIRED_PURPOSES

    output, code = await scrapy("http://127.0.0.1:9/", "--purpose", name, cwd=tmp_path)
    assert code == EXIT_ERROR
    assert f"is no longer a usage category: {RETIRED_PURPOSES[name]}" in output

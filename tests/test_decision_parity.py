"""The crawl and ``scrapy robotstxt`` (live and ``--at``) give one decision.

A real crawl with a SQLite store, ``ROBOTSTXT_ALSO_OBEY`` and a declared
purpose against a real local server; then the command, live and from the
store at the time of the crawl, with the same settings: URL by URL, what it
answers is what the crawl did (fetched, or dropped and under which cause).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .command_runner import robotstxt
from .conftest import crawl
from .redis_server import RedisServer
from .server import text

PAGE = text("<html><head></head><body>page</body></html>", content_type=b"text/html")
OWN_AND_GPTBOT = (
    "User-agent: ExampleBot\n"  # 1
    "Disallow: /private\n"  # 2
    "\n"  # 3
    "User-agent: GPTBot\n"  # 4
    "Disallow: /a\n"  # 5
)
USAGE_LINES = (
    "User-agent: *\n"  # 1
    "Content-Usage: /ai/ train-ai=n\n"  # 2
    "Disallow: /./secret\n"  # 3: LENIENT(dot-segments) reads /secret too
    "Disallow: /secret\n"  # 4
)
ALLOW_ALL = "User-agent: *\nDisallow:\n"
#: W3C TDMRep: the first rule in file order whose location matches decides
TDMREP = json.dumps(
    [
        {"location": "/tdm/open/*", "tdm-reservation": 0},
        {"location": "/tdm/*", "tdm-reservation": 1},
    ]
)
SETTINGS: dict[str, Any] = {
    "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
    "ROBOTSTXT_ALSO_OBEY": ["GPTBot"],
    "ROBOTSTXT_PURPOSES": ["train-ai"],
}


def _as_options(settings: dict[str, Any]) -> list[str]:
    options = []
    for name, value in settings.items():
        if isinstance(value, dict):
            shown = json.dumps(value)
        else:
            shown = ",".join(value) if isinstance(value, list) else str(value)
        options += ["-s", f"{name}={shown}"]
    return options


def _command_says(answer: dict[str, Any]) -> str:
    """What the command's answer says the crawl does with the URL."""
    if answer["verdict"] != "allowed":
        return f"dropped:rule:{answer['line']}"
    refused = answer.get("refused")
    if refused and refused["line"] is None:  # tdmrep.json: the crawl drops before download
        return f"dropped:usage:{refused['source']}"
    if refused:  # a robots.txt line: the crawl drops before download
        return f"dropped:usage:{refused['line']}"
    return "fetched"


def _crawl_did(spider: Any, url: str) -> str:
    if url in getattr(spider, "fetched", ()):
        return "fetched"
    reason = spider.dropped[url]
    if "usage preference" in reason and "robots.txt line " not in reason:
        assert "/.well-known/tdmrep.json" in reason, reason
        return "dropped:usage:/.well-known/tdmrep.json"
    if "usage preference" in reason:
        return "dropped:usage:" + reason.split("robots.txt line ")[1].split(":")[0]
    line = reason.split("robots.txt line ")[1].split(" ")[0].rstrip(":")
    return f"dropped:rule:{line}"


async def _crawl_then_ask(sites: Any, tmp_path: Path, store: dict[str, Any]) -> None:
    """A crawl with the store ``store`` names, then the command live and ``--at``
    the time after it: URL by URL, the same decision (see the module docstring)."""
    first = sites(routes={"/robots.txt": text(OWN_AND_GPTBOT)}, default=PAGE)
    second = sites(routes={"/robots.txt": text(USAGE_LINES)}, default=PAGE)
    third = sites(
        routes={
            "/robots.txt": text(ALLOW_ALL),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
        },
        default=PAGE,
    )
    urls = [
        first.url("/private/x"),  # our own group
        first.url("/a"),  # GPTBot's group (ROBOTSTXT_ALSO_OBEY)
        first.url("/b"),  # allowed by both
        second.url("/ai/x"),  # Content-Usage: train-ai=n
        second.url("/other"),  # allowed, nothing refused
        second.url("/x/../secret"),  # LENIENT(dot-segments): the server serves /secret
        third.url("/tdm/x"),  # tdmrep.json: reserved (tdm-reservation 1)
        third.url("/tdm/open/x"),  # tdmrep.json: its first match says 0, the second 1
        third.url("/elsewhere"),  # tdmrep.json: no location matches
        second.url("/x/../ai/y"),  # LENIENT(dot-segments): Content-Usage of /ai/y
        third.url("/x/../tdm/y"),  # LENIENT(dot-segments): tdmrep.json's /tdm/*
    ]
    settings = {**SETTINGS, **store}
    spider, _ = await crawl(urls, settings)
    did = {url: _crawl_did(spider, url) for url in urls}
    tdmrep = "dropped:usage:/.well-known/tdmrep.json"
    assert did == {
        urls[0]: "dropped:rule:2",
        urls[1]: "dropped:rule:5",
        urls[2]: "fetched",
        urls[3]: "dropped:usage:2",
        urls[4]: "fetched",
        urls[5]: "dropped:rule:4",
        urls[6]: tdmrep,
        urls[7]: "fetched",
        urls[8]: "fetched",
        urls[9]: "dropped:usage:2",
        urls[10]: tdmrep,
    }
    assert third.count("/.well-known/tdmrep.json") == 1
    everyone = (first, second, third)
    robots_fetches = sum(site.count("/robots.txt") for site in everyone)
    tdmrep_fetches = sum(site.count("/.well-known/tdmrep.json") for site in everyone)

    moment = str(time.time())
    options = _as_options(settings)
    store_options = _as_options(store)
    output, _ = await robotstxt(*urls, "--at", moment, "--json", *options, cwd=tmp_path)
    at = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _command_says(a) for a in at} == did, output
    assert sum(site.count("/robots.txt") for site in everyone) == robots_fetches
    # --at downloads nothing: the tdmrep.json copy in force is the stored one
    assert sum(site.count("/.well-known/tdmrep.json") for site in everyone) == tdmrep_fetches
    # --at the robots.txt copy's own time, as history prints it: the tdmrep.json
    # copy came later, and the crawl's requests waited for it (none decided before)
    output, _ = await robotstxt("history", third.url("/"), "--json", *store_options, cwd=tmp_path)
    (robots_copy,) = [
        entry
        for entry in (json.loads(line) for line in output.splitlines() if line.startswith("{"))
        if entry["file"] == "robots.txt"
    ]
    third_urls = [u for u in urls if u.startswith(third.origin)]
    output, _ = await robotstxt(
        *third_urls, "--at", robots_copy["fetched_at"], "--json", *options, cwd=tmp_path
    )
    early = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _command_says(a) for a in early} == {u: did[u] for u in third_urls}, output
    by_url = {a["url"]: a for a in at}
    assert by_url[urls[6]]["refused"]["rule"] == 'location "/tdm/*", tdm-reservation 1'
    assert by_url[urls[6]]["tdmrep"]["detail"].startswith("stored copy fetched at ")
    assert "HTTP 200, 2 rules" in by_url[urls[6]]["tdmrep"]["detail"]
    # the first match decides: /tdm/open/* states 0, the later /tdm/* is not read
    assert by_url[urls[7]]["usage_sources"]["tdmrep"]["train-ai"]["value"] == "y"

    output, _ = await robotstxt(*urls, "--json", *_as_options(SETTINGS), cwd=tmp_path)
    live = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _command_says(a) for a in live} == did, output
    assert [a["cause"] for a in at] == [a["cause"] for a in live]
    assert [a["cause"] for a in live] == [
        "rule",
        "rule",
        "allowed",
        "usage",
        "allowed",
        "rule",
        "usage",
        "allowed",
        "allowed",
        "usage",
        "usage",
    ]
    assert [a["refused"] for a in at] == [a["refused"] for a in live]
    by_url = {a["url"]: a for a in live}
    assert by_url[urls[1]]["decided_by"] == "GPTBot"
    assert by_url[urls[5]]["matched_as"] == "/secret"


@deferred_f_from_coro_f
async def test_crawl_live_command_and_at_give_the_same_decision_url_by_url(
    sites, tmp_path: Path
) -> None:
    """RFC 9309 2.2.1 (each token by its own groups), 2.2.2 (rules, the line
    that decided), AIPREF attach (a ``Content-Usage`` path line refuses the
    declared ``train-ai``), W3C TDMRep (tdmrep.json: the first matching
    location decides; ``tdm-reservation: 1`` refuses ``train-ai``): ``--at``
    applies the project's ``ROBOTSTXT_ALSO_OBEY`` and ``ROBOTSTXT_PURPOSES`` to
    the stored robots.txt and tdmrep.json copies, as the crawl applied them,
    and the live command does the same. A SQLite store."""
    await _crawl_then_ask(
        sites, tmp_path, {"ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}"}
    )


@deferred_f_from_coro_f
async def test_at_gives_the_crawls_decision_from_a_redis_store(
    sites, tmp_path: Path, redis_server: RedisServer, prefix: str
) -> None:
    """The same with a Redis store: its tdmrep.json copies are kept as its
    robots.txt copies are, and ``--at`` decides from them."""
    store = {"ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix}
    await _crawl_then_ask(sites, tmp_path, store)


@deferred_f_from_coro_f
async def test_with_the_addon_a_tdmrep_reservation_is_left_to_the_page_as_in_the_crawl(
    sites, tmp_path: Path
) -> None:
    """W3C TDMRep (processing priority: a page's own ``tdm-reservation`` header
    or meta supersedes tdmrep.json): with the add-on, its page middleware reads
    each page's signals, so the crawl downloads a page tdmrep.json alone
    reserves and decides by the page. The command reads the project's
    settings, where the add-on is only named in ``ADDONS``: live and ``--at``
    answer the same, downloaded, not dropped before download."""
    from .conftest import UNSET

    site = sites(
        routes={
            "/robots.txt": text(ALLOW_ALL),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
        },
        default=PAGE,
    )
    urls = [site.url("/tdm/x"), site.url("/elsewhere")]
    store = {"ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}"}
    addon = {"scrapy_rfc9309.Addon": 100}
    settings = {
        **SETTINGS,
        **store,
        "ADDONS": addon,
        "DOWNLOADER_MIDDLEWARES": {},
        "ROBOTSTXT_OBEY": UNSET,
    }
    spider, stats = await crawl(urls, settings)
    assert sorted(spider.fetched) == sorted(urls)  # the page decides, after download
    assert stats.get("robotstxt/forbidden/usage", 0) == 0
    options = [*_as_options({**SETTINGS, **store}), "-s", f"ADDONS={json.dumps(addon)}"]
    moment = str(time.time())
    for when in (["--at", moment], []):
        output, _ = await robotstxt(*urls, *when, "--json", *options, cwd=tmp_path)
        answers = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
        assert [a["cause"] for a in answers] == ["allowed", "allowed"], output
        # the note is part of the answer: --at reads no page, so it names no --page
        then = "decides by it" if when else "decides by it: --page shows that decision"
        assert answers[0]["note"].endswith(then), output
        assert answers[1]["note"] is None
        assert "store_copy" not in answers[0]  # the stored copy is this download's


#: path -> (the page's headers, its head): each page's own usage signals
PAGE_SIGNALS: dict[str, tuple[list[tuple[bytes, bytes]], str]] = {
    "/header-n": ([(b"Content-Usage", b"train-ai=n")], ""),
    "/tdm-meta-1": ([], '<meta name="tdm-reservation" content="1">'),
    "/tdm/header-0": ([(b"tdm-reservation", b"0")], ""),
    "/plain": ([], ""),
}


def _page_did(spider: Any, items: list[str], url: str) -> str:
    """What a crawl with the page middleware did with ``url``: dropped before
    download (as :func:`_crawl_did` says), or downloaded and its items kept or
    dropped by the page's usage preference."""
    if url in spider.dropped:
        return _crawl_did(spider, url)
    return "items kept" if url in items else "items dropped"


def _page_says(answer: dict[str, Any]) -> str:
    """What ``--page``'s answer says the crawl does with the URL."""
    if answer["page"]["status"] is None:  # not downloaded: decided before download
        return _command_says(answer)
    return "items dropped" if answer["refused"] else "items kept"


#: Per page, what a crawl that reads pages' signals does, and one that reads none
#: (``ROBOTS_META_OBEY = False``): tdmrep.json's reservation then drops before
#: download, and the page's own signals decide nothing.
TDMREP_DROP = "dropped:usage:/.well-known/tdmrep.json"
PAGE_OUTCOMES = {
    "/header-n": ("items dropped", "items kept"),  # its Content-Usage header
    "/tdm-meta-1": ("items dropped", "items kept"),  # its tdm-reservation meta
    "/tdm/header-0": ("items kept", TDMREP_DROP),  # its header 0 lifts tdmrep.json's 1
    "/plain": ("items kept", "items kept"),
    "/tdm/x": ("items dropped", TDMREP_DROP),  # tdmrep.json's 1, the page says nothing
    "/ai/x": ("dropped:usage:2", "dropped:usage:2"),  # robots.txt Content-Usage
    "/x/../ai/y": ("dropped:usage:2", "dropped:usage:2"),  # LENIENT(dot-segments)
    "/x/../tdm/y": ("items dropped", TDMREP_DROP),  # LENIENT(dot-segments)
    "/x/../secret": ("dropped:rule:4", "dropped:rule:4"),  # LENIENT(dot-segments)
}


@pytest.mark.parametrize("pages_read", [True, False], ids=["pages-read", "pages-not-read"])
@deferred_f_from_coro_f
async def test_page_signals_in_the_crawl_and_in_the_live_command_with_page(
    sites, tmp_path: Path, pages_read: bool
) -> None:
    """IETF AIPREF attach (a page's ``Content-Usage`` header) and W3C TDMRep
    ("Processing priority": a page's ``tdm-reservation`` header or meta
    supersedes tdmrep.json): with the page middleware, the crawl drops the
    items of a page whose own signals refuse the declared purpose, after
    download; with ``ROBOTS_META_OBEY`` off it reads no page's signals and
    drops a page tdmrep.json reserves before download. ``scrapy robotstxt
    --page --json`` with the same settings downloads the same pages, once each,
    and answers the same, URL by URL. Robots.txt rules and ``Content-Usage``
    lines drop before download (RFC 9309 2.2.2) in both."""
    from .server import html_page, page_with_headers
    from .test_usage import usage_crawl

    routes: dict[str, Any] = {
        path: page_with_headers(html_page(head), headers)
        for path, (headers, head) in PAGE_SIGNALS.items()
    }
    site = sites(
        routes={
            **routes,
            "/robots.txt": text(USAGE_LINES),
            "/.well-known/tdmrep.json": text(TDMREP, content_type=b"application/json"),
        },
        default=PAGE,
    )
    paths = list(PAGE_OUTCOMES)
    urls = [site.url(path) for path in paths]
    settings = {
        **SETTINGS,
        "ROBOTSTXT_OBEY": True,  # a project's: the page middleware's default follows it
        "ROBOTS_META_OBEY": pages_read,
        "SPIDER_MIDDLEWARES": {"scrapy_rfc9309.RobotsMetaMiddleware": 950},
    }
    spider, items, _ = await usage_crawl(urls, settings)
    did = {url: _page_did(spider, items, url) for url in urls}
    column = 0 if pages_read else 1
    assert did == {url: PAGE_OUTCOMES[path][column] for url, path in zip(urls, paths, strict=True)}
    served = {path: site.count(path) for path in paths}
    output, _ = await robotstxt(*urls, "--page", "--json", *_as_options(settings), cwd=tmp_path)
    answers = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _page_says(a) for a in answers} == did, output
    # the command downloads what the crawl downloaded, once each, and nothing else
    assert {path: site.count(path) - served[path] for path in paths} == served
    header_n = answers[0]
    if pages_read:
        assert header_n["refused"]["source"] == "Content-Usage header", output
        assert header_n["note"] is None
    else:  # read for its directives, its usage signals left out, as the crawl leaves them
        assert header_n["page"]["status"] == 200 and header_n["refused"] is None, output
        assert "reads no page's usage signals" in header_n["note"]
        # the text output is printed from the same answer, its note included
        text_output, _ = await robotstxt(urls[0], "--page", *_as_options(settings), cwd=tmp_path)
        assert "purposes:    train-ai: not refused" in text_output, text_output
        assert f"note:        {header_n['note']}" in text_output, text_output

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

from scrapy.utils.defer import deferred_f_from_coro_f

from .command_runner import robotstxt
from .conftest import crawl
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
SETTINGS: dict[str, Any] = {
    "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
    "ROBOTSTXT_ALSO_OBEY": ["GPTBot"],
    "ROBOTSTXT_PURPOSES": ["train-ai"],
}


def _as_options(settings: dict[str, Any]) -> list[str]:
    options = []
    for name, value in settings.items():
        shown = ",".join(value) if isinstance(value, list) else str(value)
        options += ["-s", f"{name}={shown}"]
    return options


def _command_says(answer: dict[str, Any]) -> str:
    """What the command's answer says the crawl does with the URL."""
    if answer["verdict"] != "allowed":
        return f"dropped:rule:{answer['line']}"
    refused = answer.get("refused")
    if refused:  # a robots.txt line: the crawl drops before download
        return f"dropped:usage:{refused['line']}"
    return "fetched"


def _crawl_did(spider: Any, url: str) -> str:
    if url in spider.fetched:
        return "fetched"
    reason = spider.dropped[url]
    if "usage preference" in reason:
        return "dropped:usage:" + reason.split("robots.txt line ")[1].split(":")[0]
    line = reason.split("robots.txt line ")[1].split(" ")[0].rstrip(":")
    return f"dropped:rule:{line}"


@deferred_f_from_coro_f
async def test_crawl_live_command_and_at_give_the_same_decision_url_by_url(
    sites, tmp_path: Path
) -> None:
    """RFC 9309 2.2.1 (each token by its own groups), 2.2.2 (rules, the line
    that decided), AIPREF attach (a ``Content-Usage`` path line refuses the
    declared ``train-ai``): ``--at`` applies the project's
    ``ROBOTSTXT_ALSO_OBEY`` and ``ROBOTSTXT_PURPOSES`` to the stored copy, as the
    crawl applied them, and the live command does the same."""
    first = sites(routes={"/robots.txt": text(OWN_AND_GPTBOT)}, default=PAGE)
    second = sites(routes={"/robots.txt": text(USAGE_LINES)}, default=PAGE)
    urls = [
        first.url("/private/x"),  # our own group
        first.url("/a"),  # GPTBot's group (ROBOTSTXT_ALSO_OBEY)
        first.url("/b"),  # allowed by both
        second.url("/ai/x"),  # Content-Usage: train-ai=n
        second.url("/other"),  # allowed, nothing refused
        second.url("/x/../secret"),  # LENIENT(dot-segments): the server serves /secret
    ]
    uri = f"sqlite:///{tmp_path / 'robots.db'}"
    settings = {**SETTINGS, "ROBOTSTXT_STORE_URI": uri}
    spider, _ = await crawl(urls, settings)
    did = {url: _crawl_did(spider, url) for url in urls}
    assert did == {
        urls[0]: "dropped:rule:2",
        urls[1]: "dropped:rule:5",
        urls[2]: "fetched",
        urls[3]: "dropped:usage:2",
        urls[4]: "fetched",
        urls[5]: "dropped:rule:4",
    }
    robots_fetches = first.count("/robots.txt") + second.count("/robots.txt")

    moment = str(time.time())
    output, _ = await robotstxt(
        *urls, "--at", moment, "--json", *_as_options(settings), cwd=tmp_path
    )
    at = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _command_says(a) for a in at} == did, output
    assert first.count("/robots.txt") + second.count("/robots.txt") == robots_fetches

    output, _ = await robotstxt(*urls, "--json", *_as_options(SETTINGS), cwd=tmp_path)
    live = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert {a["url"]: _command_says(a) for a in live} == did, output
    assert [a["cause"] for a in at] == [a["cause"] for a in live]
    assert [a["cause"] for a in live] == ["rule", "rule", "allowed", "usage", "allowed", "rule"]
    by_url = {a["url"]: a for a in live}
    assert by_url[urls[1]]["decided_by"] == "GPTBot"
    assert by_url[urls[5]]["matched_as"] == "/secret"

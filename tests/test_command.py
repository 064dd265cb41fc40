"""``scrapy robotstxt URL [--agent TOKEN] [--file PATH]``, run as a real process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f, maybe_deferred_to_future
from twisted.internet import utils

from .server import redirect, status, text

ROBOTS = "User-agent: *\nDisallow: /private\nCrawl-delay: 2\nSitemap: https://e.com/s.xml\n"


async def scrapy(*args: str, cwd: Path) -> tuple[str, int]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    out, err, code = await maybe_deferred_to_future(
        utils.getProcessOutputAndValue(
            sys.executable, ["-m", "scrapy", "robotstxt", *args], env=env, path=str(cwd)
        )
    )
    return out.decode() + err.decode(), code


@deferred_f_from_coro_f
async def test_command_fetches_through_scrapy_and_follows_redirects(sites, tmp_path) -> None:
    site = sites(routes={"/robots.txt": redirect("/real"), "/real": text(ROBOTS)})
    output, code = await scrapy(site.url("/private/x"), "--agent", "ExampleBot", cwd=tmp_path)
    assert code == 1, output
    assert 'DISALLOWED by line 2: "Disallow: /private"' in output
    assert "group:       line 1: User-agent: *" in output
    assert "crawl-delay: 2.0 s" in output
    assert "sitemap:     https://e.com/s.xml" in output
    assert site.hits == ["/robots.txt", "/real"]
    output, code = await scrapy(site.url("/public"), cwd=tmp_path)
    assert code == 0, output
    assert "agent:       Scrapy" in output


@deferred_f_from_coro_f
async def test_command_reports_unreachable_and_unavailable(sites, tmp_path) -> None:
    gone = sites(routes={"/robots.txt": status(503)})
    output, code = await scrapy(gone.url("/a"), "-s", "RETRY_ENABLED=0", cwd=tmp_path)
    assert code == 1, output
    assert "unreachable (HTTP 503)" in output
    missing = sites(routes={"/robots.txt": status(404)})
    output, code = await scrapy(missing.url("/a"), cwd=tmp_path)
    assert code == 0, output
    assert "unavailable (HTTP 404)" in output


@deferred_f_from_coro_f
async def test_command_offline_file_with_warnings(tmp_path) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_bytes(b"User-agent: ExampleBot\nDissallow /tmp\n")
    output, code = await scrapy(
        "https://e.com/tmp/a", "--file", str(robots), "--agent", "ExampleBot", cwd=tmp_path
    )
    assert code == 1, output
    assert "line 2: missing ':'" in output
    output, code = await scrapy("https://e.com/tmp/a", "--file", str(robots), cwd=tmp_path)
    assert code == 0, output  # Scrapy's token has no group here
    assert "group:       none applies" in output


@deferred_f_from_coro_f
async def test_command_errors_exit_2(tmp_path) -> None:
    output, code = await scrapy("https://e.com/", "--file", str(tmp_path / "nope"), cwd=tmp_path)
    assert code == 2, output
    assert "cannot read" in output
    output, code = await scrapy("https://e.com/", "--agent", "bad token/1", cwd=tmp_path)
    assert code == 2, output

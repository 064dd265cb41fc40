"""A user who makes a mistake in the settings hears about it in one clear line.

Real crawls against a real local server: a misspelt setting name, an
``ROBOTSTXT_ALSO_OBEY`` token written with its version.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.settings._setting_names import (
    KNOWN_SETTINGS,
    unknown_setting_warnings,
)

from .command_runner import robotstxt
from .conftest import BASE_SETTINGS, UNSET, RecordingSpider, crawl
from .server import status, text

PAGE = text("<html>page</html>", content_type=b"text/html")
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("addon", [True, False], ids=["add-on", "by-hand"])
@deferred_f_from_coro_f
async def test_a_misspelt_setting_name_warns_naming_the_closest_known_one(
    sites, caplog: pytest.LogCaptureFixture, addon: bool
) -> None:
    """``ROBOTSTXT_CRAWLDELAY = False`` used to change nothing without a word."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    settings = {**(ADDON_ONLY if addon else {}), "ROBOTSTXT_CRAWLDELAY": False}
    with caplog.at_level(logging.WARNING):
        spider, _ = await crawl([site.url("/x"), site.url("/y")], settings)
    found = [m for m in _warnings(caplog) if "ROBOTSTXT_CRAWLDELAY" in m]
    assert len(found) == 1, _warnings(caplog)
    assert "did you mean ROBOTSTXT_CRAWL_DELAY?" in found[0]
    assert spider.fetched == [site.url("/y")]  # robots.txt still obeyed


def test_known_names_and_scrapys_own_are_not_reported() -> None:
    from scrapy.settings import Settings

    settings = Settings({name: None for name in KNOWN_SETTINGS})
    settings.set("ROBOTSTXT_OBEY", True)
    assert unknown_setting_warnings(settings) == []
    settings.set("ROBOTS_META_NOINDX", "keep")
    settings.set("ROBOTSTXTOBEY", True)
    (first, second) = unknown_setting_warnings(settings)
    assert "ROBOTSTXTOBEY" in first and "ROBOTSTXT_OBEY?" in first
    assert "ROBOTS_META_NOINDX" in second and "ROBOTS_META_NOINDEX?" in second
    # a name close to none: warned, with no made-up suggestion
    settings.set("ROBOTSTXT_ZZZ", 1)
    (unrelated,) = [m for m in unknown_setting_warnings(settings) if "ROBOTSTXT_ZZZ" in m]
    assert "did you mean" not in unrelated


def test_a_negative_max_size_names_the_bound_that_applies() -> None:
    """``ROBOTSTXT_MAX_SIZE = -5`` says the bound a value must meet (1,024 bytes,
    RFC 9309 2.5), as ``0`` does: not "at least 0", which 0 would not pass."""
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._setting_values import SettingError
    from scrapy_rfc9309.components.settings._settings import max_size_setting

    for value in (-5, 0):
        with pytest.raises(SettingError, match="must be at least 1024 bytes"):
            max_size_setting(Settings({"ROBOTSTXT_MAX_SIZE": value}))


def test_every_setting_the_package_reads_is_known() -> None:
    """The list of known names follows the code: a name the package reads is
    never reported as unknown."""
    import re
    from pathlib import Path

    import scrapy_rfc9309

    root = Path(scrapy_rfc9309.__file__).parent
    read = {
        name
        for path in root.rglob("*.py")
        for name in re.findall(r'"((?:ROBOTSTXT|ROBOTS_META)_[A-Z_]+)"', path.read_text())
    }
    assert read <= KNOWN_SETTINGS, read - KNOWN_SETTINGS


@deferred_f_from_coro_f
async def test_rfc9309_2_2_1_also_obey_token_with_a_version_is_reduced_with_a_warning(
    sites, caplog: pytest.LogCaptureFixture
) -> None:
    """``ROBOTSTXT_ALSO_OBEY = ["GPTBot/1.0"]`` is read as ``GPTBot`` with a
    warning, as ``ROBOTSTXT_USER_AGENT = "MyBot/1.0"`` is; it used to stop the crawl."""
    robots = "User-agent: GPTBot\nDisallow: /ai\n"
    site = sites(routes={"/robots.txt": text(robots)}, default=PAGE)
    with caplog.at_level(logging.WARNING):
        spider, stats = await crawl(
            [site.url("/ai"), site.url("/b")], {"ROBOTSTXT_ALSO_OBEY": ["GPTBot/1.0"]}
        )
    assert spider.fetched == [site.url("/b")]
    assert stats["robotstxt/forbidden/also_obey/GPTBot"] == 1
    assert any(
        "ROBOTSTXT_ALSO_OBEY 'GPTBot/1.0' is not a product token" in m for m in _warnings(caplog)
    )


#: A crawl's settings with three values used other than as written.
WARNED_ABOUT: dict[str, Any] = {
    "ROBOTSTXT_USER_AGENT": "MyBot/1.0",
    "ROBOTSTXT_CACHE_TTL": 0,
    "ROBOTSTXT_PURPOSES": ["ai-input"],
}
#: What the crawl says about them.
WARNINGS = [
    "ROBOTSTXT_USER_AGENT 'MyBot/1.0' is not a product token; obeying robots.txt as its "
    "product name 'MyBot' (RFC 9309 2.2.1)",
    "ROBOTSTXT_CACHE_TTL is 0 s: raised to 1 s (a robots.txt kept less would be downloaded "
    "again for every request)",
    "ROBOTSTXT_PURPOSES: 'ai-input' is Content-Signal's name for the AIPREF vocabulary's "
    "'ai-use' (draft-ietf-aipref-vocab-08); declared as 'ai-use'",
]


@deferred_f_from_coro_f
async def test_rfc9309_2_2_1_each_crawler_of_a_process_says_its_setting_warnings_once(
    sites, caplog: pytest.LogCaptureFixture
) -> None:
    """Two spiders run by one ``CrawlerRunner`` in one process (as ``CrawlerProcess``
    runs them), each with a ``ROBOTSTXT_USER_AGENT`` reduced to its product token
    (RFC 9309 2.2.1), a ``ROBOTSTXT_CACHE_TTL`` under the minimum and an
    ``ai-input`` purpose: each crawler's log says each warning once, however
    many of its components (middleware, scheduler queue, meta middleware,
    extension) read its settings. The second crawler used to say none of the
    first and the last: they were kept once a process."""
    from scrapy.crawler import CrawlerRunner
    from scrapy.settings import Settings
    from scrapy.utils.test import get_reactor_settings

    from scrapy_rfc9309.components import _compat

    routes = {
        "/robots.txt": text("User-agent: MyBot\nDisallow: /x\n"),
        "/.well-known/tdmrep.json": status(404),
    }
    site = sites(routes=routes, default=PAGE)
    runner = CrawlerRunner(
        Settings(
            {
                **get_reactor_settings(),  # the reactor the tests run under
                **BASE_SETTINGS,
                **ADDON_ONLY,
                **WARNED_ABOUT,
                "ROBOTSTXT_OBEY": True,
            }
        )
    )
    for _ in range(2):  # one crawler after the other, in the same runner
        caplog.clear()
        crawler = runner.create_crawler(RecordingSpider)
        with caplog.at_level(logging.WARNING):
            await _compat.crawl(crawler, urls=[site.url("/a"), site.url("/x")])
        spider = crawler.spider
        assert isinstance(spider, RecordingSpider)
        assert spider.fetched == [site.url("/a")]  # obeyed as MyBot
        said = [
            m
            for m in _warnings(caplog)
            if m.startswith(("ROBOTSTXT_USER_AGENT", "ROBOTSTXT_CACHE_TTL", "ROBOTSTXT_PURPOSES"))
        ]
        assert sorted(said) == sorted(WARNINGS)
    assert site.count("/robots.txt") == 2  # one per crawler


def _project(root: Path, settings: str) -> Path:
    """A Scrapy project in ``root``: ``scrapy.cfg`` and ``proj/settings.py``."""
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n")
    (root / "proj").mkdir()
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "settings.py").write_text('BOT_NAME = "proj"\n' + settings)
    return root


@pytest.mark.parametrize(
    ("settings", "expected", "warned"),
    [
        ("ROBOTSTXT_OBEY = True\n", "scrapy_builtin", "obeys Scrapy's built-in"),
        ("ROBOTSTXT_OBEY = False\n", "none", "does not obey robots.txt at all"),
        ('ADDONS = {"scrapy_rfc9309.Addon": 100}\n', "scrapy_rfc9309", None),
        (
            'ADDONS = {"scrapy_rfc9309.Addon": 100}\nROBOTSTXT_OBEY = False\n',
            "none",
            "does not obey robots.txt at all",
        ),
    ],
    ids=["built-in", "off", "add-on", "add-on-but-off"],
)
@deferred_f_from_coro_f
async def test_command_in_a_project_says_which_middleware_its_crawl_obeys(
    sites, tmp_path: Path, settings: str, expected: str, warned: str | None
) -> None:
    """A project whose settings lost the add-on line crawls under Scrapy's
    built-in middleware: ``scrapy robotstxt`` there says its answers are not
    what the crawl obeys (one line on standard error), and each ``--json``
    answer names the middleware (``project_crawl``)."""
    from .test_command import json_lines, scrapy_process

    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    project = _project(tmp_path, settings)
    output, code = await scrapy_process(site.url("/y"), "--json", cwd=project)
    assert code == 0, output
    (answer,) = json_lines(output)
    assert answer["project_crawl"] == expected, output
    if warned is None:
        assert "warning:" not in output
    else:
        (line,) = [line for line in output.splitlines() if line.startswith("warning:")]
        assert warned in line and "scrapy_rfc9309.Addon" in line


@deferred_f_from_coro_f
async def test_the_command_says_its_setting_warnings_once_not_again_for_its_crawl(
    sites, tmp_path: Path
) -> None:
    """``scrapy robotstxt`` in a project with the add-on reads the settings for its
    run and says their warnings once; its crawl (the add-on's middleware and
    queue read them again) does not say them a second time."""
    from .test_command import scrapy_process

    site = sites(routes={"/robots.txt": text("User-agent: MyBot\nDisallow: /x\n")}, default=PAGE)
    settings = 'ADDONS = {"scrapy_rfc9309.Addon": 100}\nROBOTSTXT_USER_AGENT = "MyBot/1.0"\n'
    project = _project(tmp_path, settings + "ROBOTSTXT_CACHE_TTL = 0\n")
    output, code = await scrapy_process(site.url("/x"), "--purpose", "ai-input", cwd=project)
    assert code == 1, output  # disallowed for MyBot
    for warning in WARNINGS[:2]:
        assert output.count(warning) == 1, output
    assert output.count("--purpose: 'ai-input' is Content-Signal's name") == 1, output
    assert site.count("/robots.txt") == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ROBOTSTXT_MAX_SIZE", -5),
        ("ROBOTS_META_NOINDEX", "bogus"),
        ("ROBOTSTXT_STORE_URI", "ftp://example.com/robots"),
    ],
)
@pytest.mark.parametrize("addon", [True, False], ids=["add-on", "by-hand"])
@deferred_f_from_coro_f
async def test_a_bad_setting_is_one_error_line_before_the_traceback(
    sites, caplog: pytest.LogCaptureFixture, name: str, value: Any, addon: bool
) -> None:
    """The message naming the setting is logged once, at ERROR, as the crawl
    stops: not only the last line of a long traceback."""
    from scrapy_rfc9309.components.settings._setting_values import SettingError

    site = sites(default=PAGE)
    settings = {**(ADDON_ONLY if addon else {}), name: value}
    with caplog.at_level(logging.ERROR), pytest.raises(SettingError):
        await crawl([site.url("/")], settings, allow_errors=True)
    ours = [r.getMessage() for r in caplog.records if r.name == "scrapy_rfc9309.settings"]
    assert len(ours) == 1, ours
    assert ours[0].startswith("The crawl cannot start: ") and name in ours[0]
    assert site.hits == []


@pytest.mark.parametrize("args", [(), ("--json",), ("--at", "2026-01-01T00:00:00Z")])
def test_command_with_no_url_on_a_terminal_prints_its_usage(tmp_path: Path, args: tuple) -> None:
    """``scrapy robotstxt`` with no URL, its standard input a terminal, says how
    to use it and exits 2 instead of waiting silently for URLs on standard input."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [str(Path(sys.executable).with_name("scrapy")), "robotstxt", *args],
            stdin=follower,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"},
            check=False,
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "give at least one URL" in done.stderr
    assert "scrapy robotstxt [URL ...]" in done.stderr


@pytest.mark.parametrize("crawl_delay", [True, False], ids=["crawl-delay", "no-crawl-delay"])
@deferred_f_from_coro_f
async def test_a_redis_store_without_the_redis_package_says_what_to_install(
    sites, monkeypatch: pytest.MonkeyPatch, crawl_delay: bool, tmp_path: Path
) -> None:
    """Without the ``[redis]`` extra, a crawl with a Redis store stops at start-up
    saying ``pip install redis`` (the ``[redis]`` extra), not with a bare
    ``ModuleNotFoundError: No module named 'redis'``."""
    import sys

    from scrapy_rfc9309.components.settings._setting_values import SettingError

    monkeypatch.setitem(sys.modules, "redis", None)  # import redis: ImportError
    for name in list(sys.modules):
        if name.startswith("scrapy_rfc9309.sites._redis") or name.endswith("_cluster_clock"):
            monkeypatch.delitem(sys.modules, name)
    site = sites(default=PAGE)
    settings = {
        **ADDON_ONLY,
        "ROBOTSTXT_STORE_URI": "redis://127.0.0.1:1/0",
        "ROBOTSTXT_CRAWL_DELAY": crawl_delay,
    }
    with pytest.raises(SettingError, match=r"pip install redis \(the \[redis\] extra") as error:
        await crawl([site.url("/")], settings, allow_errors=True)
    assert "ROBOTSTXT_STORE_URI = 'redis://127.0.0.1:1/0'" in str(error.value)
    assert site.hits == []
    # the command in the same project: one line, exit 2, no traceback
    output, code = await robotstxt(
        site.url("/"), "-s", "ROBOTSTXT_STORE_URI=redis://127.0.0.1:1/0", cwd=tmp_path
    )
    assert code == 2, output
    assert "pip install redis (the [redis] extra" in output and "Traceback" not in output
    assert site.hits == []


@deferred_f_from_coro_f
async def test_command_store_without_a_store_report_is_a_usage_error(sites, tmp_path: Path) -> None:
    """``--store`` is read by ``history``, ``--at`` and ``prune``; given for a live
    answer it was silently ignored, and is now refused naming what reads it."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nDisallow: /x\n")}, default=PAGE)
    output, code = await robotstxt(site.url("/a"), "--store", "bogus://x", cwd=tmp_path)
    assert code == 2, output
    assert "--store is read by history, --at and prune" in output
    assert site.hits == []


def test_a_python_list_given_with_s_says_how_to_write_purposes() -> None:
    """``-s 'ROBOTSTXT_PURPOSES=["train-ai"]'`` reaches the settings as a string
    that Scrapy splits at commas: the error says how to write it."""
    from scrapy.settings import Settings

    from scrapy_rfc9309.components.settings._setting_values import SettingError
    from scrapy_rfc9309.components.settings._settings import RobotsTxtSettings

    with pytest.raises(SettingError, match="write -s ROBOTSTXT_PURPOSES=train-ai,search"):
        RobotsTxtSettings.from_settings(Settings({"ROBOTSTXT_PURPOSES": '["train-ai"]'}))


@deferred_f_from_coro_f
async def test_command_says_the_crawl_delay_a_crawl_applies_when_capped(
    sites, tmp_path: Path
) -> None:
    """``Crawl-delay: 1e300`` is what the file asks; a crawl waits
    ``ROBOTSTXT_CRAWL_DELAY_MAX``: the command shows both."""
    site = sites(routes={"/robots.txt": text("User-agent: *\nCrawl-delay: 1e300\n")})
    output, code = await robotstxt(site.url("/a"), cwd=tmp_path)
    assert code == 0, output
    assert "crawl-delay: 1e+300 s (a crawl waits 60.0 s: ROBOTSTXT_CRAWL_DELAY_MAX)" in output

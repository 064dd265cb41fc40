"""A crawl with the add-on either obeys robots.txt or does not start.

The add-on turns Scrapy's own robots.txt middleware off. Scrapy disables a
component whose ``from_crawler`` raises ``NotConfigured`` with one WARNING and
crawls on, so a ``NotConfigured`` raised while ours start (by Scrapy's own
utilities) would crawl with no robots.txt at all (RFC 9309 2.2.2: a crawler
MUST obey the rules). These crawls run against a real local server and look at
what it served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309.components.crawl import _pacing_middleware
from scrapy_rfc9309.components.extension import _extension
from scrapy_rfc9309.components.settings._setting_values import SettingError
from scrapy_rfc9309.components.sitefiles import _service

from .command_runner import robotstxt
from .conftest import UNSET, crawl
from .server import text

PAGE = text("<html>page</html>", content_type=b"text/html")
ROBOTS = text("User-agent: *\nDisallow: /private\n")
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
}


@pytest.fixture
def project_without_cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A deployment that names its settings module in ``SCRAPY_SETTINGS_MODULE``
    and has no ``scrapy.cfg`` (a common container set-up): Scrapy counts it as a
    project whose data directory it cannot locate."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "scrapy.settings.default_settings")
    return tmp_path


@deferred_f_from_coro_f
async def test_relative_sqlite_store_without_scrapy_cfg_stops_the_crawl_naming_the_setting(
    sites, project_without_cfg: Path
) -> None:
    """``sqlite:///robots.db`` goes in the project's data directory; where it
    cannot be located the crawl stops at start-up naming the setting, before
    any request (it used to crawl ``/private/1`` with robots.txt off)."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    with pytest.raises(SettingError, match="ROBOTSTXT_STORE_URI") as error:
        await crawl(
            [site.url("/private/1")],
            {**ADDON_ONLY, "ROBOTSTXT_STORE_URI": "sqlite:///robots.db"},
            allow_errors=True,
        )
    assert "absolute path" in str(error.value)
    assert site.hits == []


@deferred_f_from_coro_f
async def test_absolute_sqlite_store_without_scrapy_cfg_obeys_robots_txt(
    sites, project_without_cfg: Path
) -> None:
    """An absolute SQLite path needs no data directory: the crawl obeys."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    uri = f"sqlite:///{project_without_cfg / 'robots.db'}"
    spider, stats = await crawl(
        [site.url("/private/1"), site.url("/public")], {**ADDON_ONLY, "ROBOTSTXT_STORE_URI": uri}
    )
    assert spider.fetched == [site.url("/public")]
    assert site.count("/robots.txt") == 1
    assert site.count("/private/1") == 0
    assert stats["robotstxt/forbidden/rule"] == 1


@deferred_f_from_coro_f
async def test_redis_store_without_scrapy_cfg_obeys_robots_txt(
    sites, project_without_cfg: Path, redis_server: Any, prefix: str
) -> None:
    """A Redis store needs no data directory either."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    spider, _ = await crawl(
        [site.url("/private/1"), site.url("/public")],
        {**ADDON_ONLY, "ROBOTSTXT_STORE_URI": redis_server.url, "ROBOTSTXT_STORE_PREFIX": prefix},
    )
    assert spider.fetched == [site.url("/public")]
    assert site.count("/robots.txt") == 1
    assert site.count("/private/1") == 0


def _raise_not_configured(*args: Any, **kwargs: Any) -> Any:
    raise NotConfigured("a utility could not find what it needed")


@pytest.mark.parametrize(
    ("module", "name", "component", "settings"),
    [
        (_service, "RobotsTxtFetcher", "RobotsTxtMiddleware", {}),
        (_extension, "httpcache_honours_noarchive", "RobotsTxtExtension", {}),
        (
            _pacing_middleware,
            "site_service",
            "ClusterDelayMiddleware",
            {"EXTENSIONS": {"scrapy_rfc9309.RobotsTxtExtension": None}},
        ),
    ],
    ids=["middleware", "extension", "pacing-middleware"],
)
@deferred_f_from_coro_f
async def test_not_configured_while_a_component_starts_stops_the_crawl(
    sites,
    monkeypatch: pytest.MonkeyPatch,
    module: Any,
    name: str,
    component: str,
    settings: dict[str, Any],
) -> None:
    """Any ``NotConfigured`` raised inside one of our components while it starts
    with ``ROBOTSTXT_OBEY`` on stops the crawl naming the component: the crawl
    obeys robots.txt or does not run, never crawls with it silently off."""
    monkeypatch.setattr(module, name, _raise_not_configured)
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    with pytest.raises(SettingError, match=component):
        await crawl([site.url("/private/1")], {**ADDON_ONLY, **settings}, allow_errors=True)
    assert site.hits == []


@deferred_f_from_coro_f
async def test_robotstxt_obey_off_still_disables_our_components_quietly(sites) -> None:
    """Off on purpose stays off: ``ROBOTSTXT_OBEY = False`` is not an error."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    spider, _ = await crawl(
        [site.url("/private/1")], {**ADDON_ONLY, "ROBOTSTXT_OBEY": False, "ROBOTS_META_OBEY": UNSET}
    )
    assert spider.fetched == [site.url("/private/1")]
    assert site.count("/robots.txt") == 0


@deferred_f_from_coro_f
async def test_command_with_relative_sqlite_store_without_scrapy_cfg_exits_2_in_one_line(
    sites, project_without_cfg: Path
) -> None:
    """``scrapy robotstxt`` in the same deployment exits 2 (a usage error) with
    the setting named, not 1 with a traceback (1 reads as "disallowed")."""
    site = sites(routes={"/robots.txt": ROBOTS}, default=PAGE)
    output, code = await robotstxt(
        site.url("/public"),
        "-s",
        "ROBOTSTXT_STORE_URI=sqlite:///robots.db",
        cwd=project_without_cfg,
    )
    assert code == 2
    assert "ROBOTSTXT_STORE_URI" in output
    assert "Traceback" not in output
    assert len(output.strip().splitlines()) <= 2, output  # Scrapy's usage line, then ours
    assert site.hits == []

"""Crawl-delay applies to a site's pages whatever download slot they are sent
in (a slot named in ``meta["download_slot"]``, or the one a redirect from
another host carries)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import UNSET, crawl
from .server import redirect, text

PAGE = text("<html>page</html>", content_type=b"text/html")
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}
DELAYED = "User-agent: *\nCrawl-delay: 0.6\n"


def _gaps(site: Any, paths: set[str]) -> list[float]:
    times = [t for path, t in zip(site.hits, site.hit_times, strict=True) if path in paths]
    return [later - earlier for earlier, later in pairwise(times)]


@deferred_f_from_coro_f
async def test_crawl_delay_holds_for_pages_reached_by_a_redirect_from_another_host(sites) -> None:
    """Scrapy keeps a redirected request's ``download_slot`` (its first host's):
    the pages of the site redirected to are still spaced by its Crawl-delay."""
    target = sites(host="127.0.0.2", routes={"/robots.txt": text(DELAYED)}, default=PAGE)
    origin = sites(routes={"/robots.txt": text("User-agent: *\nAllow: /\n")})
    paths = {f"/p{i}" for i in range(4)}
    for path in paths:
        origin.routes["/r" + path] = redirect(target.url(path))
    await crawl([origin.url("/r" + p) for p in sorted(paths)], ADDON_ONLY)
    gaps = _gaps(target, paths)
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps


@deferred_f_from_coro_f
async def test_crawl_delay_holds_in_a_download_slot_named_in_meta(sites) -> None:
    """``meta["download_slot"]`` names the slot the spider's requests share: the
    site's Crawl-delay still spaces its pages."""
    site = sites(routes={"/robots.txt": text(DELAYED)}, default=PAGE)
    paths = {f"/p{i}" for i in range(4)}
    await crawl([site.url(p) for p in sorted(paths)], ADDON_ONLY, meta={"download_slot": "shared"})
    gaps = _gaps(site, paths)
    assert len(gaps) == 3
    assert min(gaps) >= 0.55, gaps

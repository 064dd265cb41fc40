"""A site's ``Sitemap`` lines from the robots.txt fetched, for ``SitemapSpider`` and spiders.

Scrapy's ``SitemapSpider`` documents ``sitemap_urls = ["https://site/robots.txt"]``:
it downloads the robots.txt a second time to read its ``Sitemap`` lines
(RFC 9309 2.2.4: other records). Here its request is answered from the
robots.txt fetched for the site's rules instead, with no download
(:func:`answer_from_copy`); :func:`robots_sitemaps` gives any spider the same lines.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from scrapy.http import Request, TextResponse
from scrapy.spiders import SitemapSpider
from scrapy.utils.httpobj import urlparse_cached

from ...sites._outcome import Kind
from ...sites._site import robots_url, site_of

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from ...sites._outcome import SiteOutcome

__all__ = [
    "ANSWERED_FLAG",
    "SITEMAP_SCHEMES",
    "answer_from_copy",
    "robots_sitemaps",
    "sitemap_urls",
    "split_sitemaps",
]

# the middleware's logger: these lines are documented under its name
logger = logging.getLogger("scrapy_rfc9309.middleware")

#: The flag of a response built from the robots.txt fetched (Scrapy shows it
#: at the end of its "Crawled" line).
ANSWERED_FLAG = "robotstxt"
#: The callback of ``SitemapSpider`` that reads a robots.txt or a sitemap.
_SITEMAP_CALLBACK = "_parse_sitemap"


#: The schemes a ``Sitemap`` URL may have; any other (``file:``, ``ftp:``,
#: ``data:``, ...) is refused: a remote robots.txt must not make the crawler
#: read a local file.
SITEMAP_SCHEMES = frozenset({"http", "https"})


def split_sitemaps(outcome: SiteOutcome, site: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The outcome's ``Sitemap`` lines as ``(as written, absolute)`` pairs whose
    absolute URL is http(s), and the absolute URLs refused (another scheme).

    Made absolute against the robots.txt they were read from (the last URL of
    the redirect chain, RFC 9309 2.3.1.2). Pure."""
    base = outcome.chain[-1][0] if outcome.chain else robots_url(site)
    kept: list[tuple[str, str]] = []
    refused: list[str] = []
    for sitemap in outcome.sitemaps:
        url = urljoin(base, sitemap)
        if url.partition(":")[0].lower() in SITEMAP_SCHEMES and "://" in url:
            kept.append((sitemap, url))
        else:
            refused.append(url)
    return kept, refused


def sitemap_urls(outcome: SiteOutcome, site: str) -> list[str]:
    """The outcome's http(s) ``Sitemap`` URLs, absolute (see :func:`split_sitemaps`)."""
    return [url for _, url in split_sitemaps(outcome, site)[0]]


def refuse_sitemaps(
    site: str, refused: list[str], stats: StatsCollector | None, spider: Any = None
) -> None:
    """Say and count the ``Sitemap`` URLs of ``site`` that are not http(s)."""
    for url in refused:
        if stats is not None:
            stats.inc_value("robotstxt/sitemap_refused")
        logger.warning(
            "Sitemap %s of the robots.txt of %s refused: not an http or https URL "
            "(a robots.txt never makes the crawler read a local file or another scheme)",
            url[:200],
            site,
            extra={"spider": spider},
        )


def answer_from_copy(
    outcome: SiteOutcome, site: str, request: Request, spider: Any, stats: StatsCollector
) -> TextResponse | None:
    """A response to a ``SitemapSpider``'s request for the site's own robots.txt,
    built from the copy fetched for its rules; ``None``: not such a request, or
    nothing to answer with (the request is decided as any).

    A parsed file answers with its http(s) ``Sitemap`` lines (the body holds
    those lines only; any other scheme, ``file:`` say, is refused with a
    WARNING and ``robotstxt/sitemap_refused``), at the URL and status it was
    read from (after redirects); an unavailable one (4xx, RFC 9309 2.3.1.3)
    with its status and no body, as a download would. An unreachable one is
    not answered: the request is dropped as every request of the site (RFC
    9309 2.3.1.4).
    """
    if not _reads_sitemaps(request, spider) or not _is_robots_url(request):
        return None
    last_url, last_status = outcome.chain[-1] if outcome.chain else (request.url, None)
    if outcome.kind is Kind.PARSED:
        status = last_status if last_status is not None else 200
        kept, refused = split_sitemaps(outcome, site)
        refuse_sitemaps(site, refused, stats, spider)
        body = "".join(f"Sitemap: {sitemap}\n" for sitemap, _ in kept)
    elif outcome.kind is Kind.UNAVAILABLE:
        status = last_status if last_status is not None and 400 <= last_status < 500 else 404
        body = ""
    else:
        return None
    request.meta["dont_cache"] = True  # not a download: nothing for the HTTP cache
    stats.inc_value("robotstxt/answered_from_copy")
    logger.debug(
        "Answered from the robots.txt fetched for %s (no download): %s",
        site,
        request,
        extra={"spider": spider},
    )
    return TextResponse(
        last_url,
        status=status,
        headers={"Content-Type": "text/plain; charset=utf-8"},
        body=body.encode("utf-8", "surrogatepass"),
        encoding="utf-8",
        request=request,
        flags=[ANSWERED_FLAG],
    )


def _reads_sitemaps(request: Request, spider: Any) -> bool:
    """Whether ``request`` is a ``SitemapSpider``'s, for its sitemap callback."""
    if not isinstance(spider, SitemapSpider):  # most spiders: asked first
        return False
    callback = request.callback
    return (
        getattr(callback, "__name__", None) == _SITEMAP_CALLBACK
        and getattr(callback, "__self__", None) is spider
    )


def _is_robots_url(request: Request) -> bool:
    """Whether ``request`` asks for its site's own robots.txt (no query)."""
    parts = urlparse_cached(request)
    return parts.path == "/robots.txt" and not parts.query


async def robots_sitemaps(crawler: Crawler, url: str) -> list[str]:
    """The http(s) ``Sitemap`` URLs of the robots.txt of ``url``'s site, absolute
    (any other scheme refused, as by :func:`answer_from_copy`).

    From the copy the crawl keeps; when there is none in force, the site's
    robots.txt is fetched (once, shared with the site's requests), as for a
    request of the site. ``[]`` when the robots.txt is unavailable,
    unreachable or has no ``Sitemap`` line, or when the spider closes first.
    ``RuntimeError`` if the crawl does not obey robots.txt through
    scrapy-rfc9309; ``ValueError`` if ``url`` has no site.
    """
    from ..sitefiles._service import site_service

    service = site_service(crawler, create=False)
    if service is None:
        raise RuntimeError(
            "robots_sitemaps() needs scrapy_rfc9309.RobotsTxtMiddleware enabled "
            "(the add-on, and ROBOTSTXT_OBEY on)"
        )
    site = site_of(url)
    if site is None:
        raise ValueError(f"not an absolute URL with a host: {url!r}")
    outcome = service.fresh(site)
    if outcome is None:
        outcome = await service.wait_for(site, Request(robots_url(site), dont_filter=True))
    if outcome is None or outcome.kind is not Kind.PARSED:
        return []
    kept, refused = split_sitemaps(outcome, site)
    refuse_sitemaps(site, refused, crawler.stats, crawler.spider)
    return [url for _, url in kept]

"""tdmrep.json is fetched after robots.txt, and only where robots.txt allows it.

RFC 9309 2.2.2: a crawler fetches no URL its robots.txt disallows, and
``/.well-known/tdmrep.json`` (W3C TDMRep) is no exception (only
``/robots.txt`` itself is). So a site's tdmrep.json, needed for a declared
purpose, is fetched once its robots.txt is settled, if that allows it for the
crawler's token and each ``ROBOTSTXT_ALSO_OBEY`` token; otherwise it is not
fetched and states nothing, counted in ``robotstxt/tdmrep/disallowed``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl
from .server import Held, text

TDMREP_PATH = "/.well-known/tdmrep.json"
TDMREP = json.dumps([{"location": "/tdm/*", "tdm-reservation": 1}])
SETTINGS: dict[str, Any] = {
    "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
    "ROBOTSTXT_PURPOSES": ["train-ai"],
}
QUEUE = {"SCHEDULER_PRIORITY_QUEUE": "scrapy_rfc9309.RobotsTxtPriorityQueue"}


def _site(sites: Any, robots: str, held: Held | None = None) -> Any:
    return sites(
        routes={
            "/robots.txt": held or text(robots),
            TDMREP_PATH: text(TDMREP, content_type=b"application/json"),
        },
        default=text("page"),
    )


@pytest.mark.parametrize("queue", [True, False], ids=["our-queue", "other-queue"])
@deferred_f_from_coro_f
async def test_rfc9309_2_2_2_tdmrep_json_fetched_only_after_robots_txt_answered(
    sites, queue: bool
) -> None:
    """The tdmrep.json request reaches the server after robots.txt was answered
    (it was fetched ahead beside it, before robots.txt could say whether it may
    be), and is still read: a reserved page is dropped, another fetched."""
    held = Held(lambda: True, text("User-agent: *\nAllow: /\n"))
    site = _site(sites, "", held)
    urls = [site.url("/tdm/a"), site.url("/free")]
    spider, stats = await crawl(urls, {**SETTINGS, **(QUEUE if queue else {})})
    assert spider.fetched == [site.url("/free")]
    assert site.count(TDMREP_PATH) == 1
    tdmrep_arrived = site.hit_times[site.hits.index(TDMREP_PATH)]
    assert tdmrep_arrived >= held.answered[0], (site.hits, site.hit_times, held.answered)
    assert stats.get("robotstxt/tdmrep/disallowed", 0) == 0


@pytest.mark.parametrize(
    ("robots", "also"),
    [
        pytest.param("User-agent: *\nDisallow: /.well-known/\n", [], id="our-token"),
        pytest.param(
            "User-agent: GPTBot\nDisallow: /.well-known/\n\nUser-agent: *\nAllow: /\n",
            ["GPTBot"],
            id="also-obey-token",
        ),
    ],
)
@pytest.mark.parametrize("queue", [True, False], ids=["our-queue", "other-queue"])
@deferred_f_from_coro_f
async def test_rfc9309_2_2_2_a_tdmrep_json_robots_txt_disallows_is_never_fetched(
    sites, caplog, robots: str, also: list[str], queue: bool
) -> None:
    """Robots.txt disallows ``/.well-known/`` to our token, or to a
    ``ROBOTSTXT_ALSO_OBEY`` token: tdmrep.json is not requested; it states
    nothing (as a 404), so its reservation cannot drop a page; one INFO line
    and ``robotstxt/tdmrep/disallowed`` say so."""
    site = _site(sites, robots)
    urls = [site.url("/tdm/a"), site.url("/free")]
    settings = {**SETTINGS, "ROBOTSTXT_ALSO_OBEY": also, **(QUEUE if queue else {})}
    with caplog.at_level(logging.INFO, logger="scrapy_rfc9309.usage"):
        spider, stats = await crawl(urls, settings)
    assert site.count(TDMREP_PATH) == 0
    assert sorted(spider.fetched) == sorted(urls)
    assert stats["robotstxt/tdmrep/disallowed"] == 1
    (line,) = [r.getMessage() for r in caplog.records if "Not fetching" in r.getMessage()]
    assert line.startswith(f"Not fetching {site.origin}{TDMREP_PATH}: Forbidden by robots.txt")
    assert '"Disallow: /.well-known/"' in line and line.endswith("it states nothing"), line


@deferred_f_from_coro_f
async def test_rfc9309_2_2_2_at_says_a_disallowed_tdmrep_json_was_never_fetched(
    sites, tmp_path
) -> None:
    """``scrapy robotstxt --at``: the robots.txt copy in force disallows
    tdmrep.json, so the crawl never fetched it; the answer says so (not "not
    kept by the store") and decides as the crawl did."""
    import time

    from .command_runner import robotstxt

    site = _site(sites, "User-agent: *\nDisallow: /.well-known/\n")
    store = {"ROBOTSTXT_STORE_URI": f"sqlite:///{tmp_path / 'robots.db'}"}
    urls = [site.url("/tdm/a")]
    spider, _ = await crawl(urls, {**SETTINGS, **store})
    assert spider.fetched == urls and site.count(TDMREP_PATH) == 0
    options = [
        "-s",
        f"USER_AGENT={SETTINGS['USER_AGENT']}",
        "-s",
        "ROBOTSTXT_PURPOSES=train-ai",
        "-s",
        f"ROBOTSTXT_STORE_URI={store['ROBOTSTXT_STORE_URI']}",
    ]
    output, _ = await robotstxt(*urls, "--at", str(time.time()), "--json", *options, cwd=tmp_path)
    (answer,) = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert answer["cause"] == "allowed" and answer["refused"] is None, output
    assert answer["tdmrep"]["detail"].startswith("not fetched: robots.txt disallows it"), output


def test_rfc9309_2_2_2_an_expired_robots_txt_copy_still_keeps_tdmrep_json_unfetched() -> None:
    """A request released by a robots.txt copy that has expired since is decided
    by that copy, and may start its site's tdmrep.json fetch then: the copy's
    ``Disallow: /.well-known/`` still keeps tdmrep.json from being fetched
    (it was fetched unchecked once no copy was in force)."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler
    from twisted.internet.task import Clock as ManualTime

    from scrapy_rfc9309 import RobotsTxt, RobotsTxtMiddleware
    from scrapy_rfc9309.components._clock import Clock, use_clock
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    crawler = get_crawler(Spider, {"ADDONS": {"scrapy_rfc9309.Addon": 100}, **SETTINGS})
    time = ManualTime()
    use_clock(crawler, Clock.manual(time))
    crawler.spider = crawler._create_spider("x")
    service = RobotsTxtMiddleware.from_crawler(crawler).service
    check = _robots_check(service)
    site = "http://example.com:80"
    robots = RobotsTxt.parse(b"User-agent: *\nDisallow: /.well-known/\n")
    now = service.clock.monotonic()
    service._table.start(site)
    service._table.settle(site, SiteOutcome(Kind.PARSED, robots, "HTTP 200", now + 10))
    check.keep(site)
    in_force = check.refusal(site)
    assert in_force is not None and '"Disallow: /.well-known/"' in in_force
    time.advance(60)  # the copy has expired; a request it released is decided by it
    assert service.fresh(site) is None
    check.keep(site)
    assert check.refusal(site) == in_force


def _robots_check(service: Any) -> Any:
    """The robots.txt check of the service's tdmrep.json fetches."""
    assert service.usage is not None and service.usage.tdmrep is not None
    return service.usage.tdmrep._robots_check


def test_rfc9309_2_2_2_a_tdmrep_json_fetch_waiting_to_start_keeps_its_robots_txt_copy() -> None:
    """A tdmrep.json fetch may wait for room between its launch and its start;
    meanwhile other sites settle. With ``ROBOTSTXT_CACHE_MAX_SITES = 1`` they
    evicted the site's robots.txt copy, and the fetch then found nothing to ask
    and fetched tdmrep.json unchecked, though ``Disallow: /.well-known/``. The
    copy's answer is now read at the launch too, and used at the start when no
    copy is kept any more."""
    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from scrapy_rfc9309 import RobotsTxt, RobotsTxtMiddleware
    from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome

    settings = {"ADDONS": {"scrapy_rfc9309.Addon": 100}, "ROBOTSTXT_CACHE_MAX_SITES": 1}
    crawler = get_crawler(Spider, {**settings, **SETTINGS})
    crawler.spider = crawler._create_spider("x")
    service = RobotsTxtMiddleware.from_crawler(crawler).service
    check = _robots_check(service)
    disallowing = RobotsTxt.parse(b"User-agent: *\nDisallow: /.well-known/\n")
    later = service.clock.monotonic() + 3600

    def settle(site: str) -> None:
        service._table.start(site)
        service._table.settle(site, SiteOutcome(Kind.PARSED, disallowing, "HTTP 200", later))

    site = "http://a.example:80"
    settle(site)
    check.keep(site)  # its tdmrep.json fetch launched, waiting to start
    settle("http://b.example:80")  # beyond the bound: the copy evicted
    assert service._table.stale(site) is None
    refusal = check.refusal(site)
    assert refusal is not None and '"Disallow: /.well-known/"' in refusal
    # a copy kept at the start is read then (here a newer one that allows it)
    allowing = RobotsTxt.parse(b"User-agent: *\nAllow: /\n")
    check.keep(site)
    service._table.start(site)
    service._table.settle(site, SiteOutcome(Kind.PARSED, allowing, "HTTP 200", later))
    assert check.refusal(site) is None

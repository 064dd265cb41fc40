"""``scrapy robotstxt`` fetches through the crawl's site service, in its one-attempt mode.

Real runs of the command (in the test's reactor, :mod:`.command_runner`)
against the real local server: each site's robots.txt is downloaded once and
live by a :class:`~scrapy_rfc9309.components.sitefiles._service.SiteService`
of the command's crawl (RFC 9309 2.3.1.4: an unreachable answer is that one
attempt's outcome, never deferred nor retried; no copy taken from a store,
none saved there), counted, logged and announced (``robots_parsed``) as the
crawl does. The command's crawler is seen through a downloader middleware
given with ``-s``.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rfc9309 import robots_parsed
from scrapy_rfc9309.components.command._command import EXIT_DISALLOWED, EXIT_ERROR, EXIT_NO_ROBOTS

from .command_runner import robotstxt
from .conftest import crawl
from .server import status, text

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.crawler import Crawler
    from scrapy.http import Request


class SeenByTheCommand:
    """A downloader middleware of the command's crawl: keeps its crawler and the
    URL of each ``robots_parsed`` request sent in it."""

    crawlers: ClassVar[list[Crawler]] = []
    parsed: ClassVar[list[str]] = []

    def __init__(self, crawler: Crawler) -> None:
        crawler.signals.connect(self._on_robots_parsed, signal=robots_parsed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeenByTheCommand:
        cls.crawlers.append(crawler)
        return cls(crawler)

    def _on_robots_parsed(self, robotparser: Any, request: Request) -> None:
        self.parsed.append(request.url)


#: ``-s`` options: the middleware above, and a project's crawl (our middleware
#: and scheduler queue, deferral of unreachable sites, Scrapy's retries on)
WATCHED = (
    "-s",
    "DOWNLOADER_MIDDLEWARES="
    + json.dumps(
        {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "scrapy_rfc9309.RobotsTxtMiddleware": 100,
            f"{__name__}.SeenByTheCommand": 50,
        }
    ),
    "-s",
    "ROBOTSTXT_OBEY=True",
    "-s",
    "SCHEDULER_PRIORITY_QUEUE=scrapy_rfc9309.RobotsTxtPriorityQueue",
    "-s",
    "ROBOTSTXT_UNREACHABLE_DEFER=300",
    "-s",
    "RETRY_ENABLED=True",
)


#: the robots.txt a crawl puts in the store
CRAWLED = b"User-agent: *\nDisallow: /a\n"


@pytest.fixture
def seen() -> Iterator[type[SeenByTheCommand]]:
    SeenByTheCommand.crawlers.clear()
    SeenByTheCommand.parsed.clear()
    yield SeenByTheCommand
    SeenByTheCommand.crawlers.clear()
    SeenByTheCommand.parsed.clear()


def _answers(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith('{"')]


def _stats(seen: type[SeenByTheCommand]) -> dict[str, Any]:
    (crawler,) = seen.crawlers  # the command's one crawl
    assert crawler.stats is not None
    return crawler.stats.get_stats()


@deferred_f_from_coro_f
async def test_2_3_1_4_a_503_is_the_commands_one_attempt_answer_at_once(
    sites, tmp_path, seen
) -> None:
    """RFC 9309 2.3.1.4: a robots.txt answering 503 is unreachable: the command's
    answer is that one attempt's outcome, at once, in a project whose crawl would
    defer the site (ROBOTSTXT_UNREACHABLE_DEFER) and whose Scrapy retries a 503;
    the server saw one request. The download was the site service's: counted
    and logged as a crawl's (saying it is not tried again)."""
    site = sites(routes={"/robots.txt": status(503)})
    started = time.monotonic()
    output, code = await robotstxt(site.url("/a"), "--json", *WATCHED, cwd=tmp_path)
    assert time.monotonic() - started < 10, output
    assert code == EXIT_NO_ROBOTS, output
    (answer,) = _answers(output)
    assert (answer["verdict"], answer["outcome"], answer["detail"]) == (
        "disallowed",
        "unreachable",
        "HTTP 503",
    )
    assert site.hits == ["/robots.txt"]
    assert (
        f"robots.txt unreachable (HTTP 503): {site.url('/robots.txt')}; a crawl given this "
        "answer would drop "
        f"requests to {site.origin} (RFC 9309 2.3.1.4); one attempt, not tried again"
    ) in output
    stats = _stats(seen)
    assert stats["robotstxt/request_count"] == 1
    assert stats["robotstxt/unreachable"] == 1
    assert "robotstxt/deferred" not in stats and "robotstxt/deferred/retries" not in stats
    assert "retry/count" not in stats


@deferred_f_from_coro_f
async def test_2_4_a_copy_in_the_store_is_not_the_commands_answer(sites, tmp_path, seen) -> None:
    """The command answers live: a site whose robots.txt a crawl has put in the
    store (fresh, RFC 9309 2.4) is downloaded again, through the site service
    (counted, ``robots_parsed`` sent as in a crawl), and the command saves
    nothing there: the store's history keeps the crawl's copy only."""
    site = sites(routes={"/robots.txt": text(CRAWLED)}, default=text("x"))
    store = f"sqlite:///{Path(tmp_path) / 'robots.db'}"
    spider, _ = await crawl([site.url("/b")], {"ROBOTSTXT_STORE_URI": store})
    assert spider.fetched == [site.url("/b")]
    site.routes["/robots.txt"] = text("User-agent: *\nDisallow: /b\n")
    output, code = await robotstxt(
        site.url("/b"), "--json", *WATCHED, "-s", f"ROBOTSTXT_STORE_URI={store}", cwd=tmp_path
    )
    assert code == EXIT_DISALLOWED, output
    (answer,) = _answers(output)
    assert (answer["verdict"], answer["line"], answer["rule"]) == ("disallowed", 2, "Disallow: /b")
    assert site.count("/robots.txt") == 2  # the crawl's download, and the command's
    stats = _stats(seen)
    assert (stats["robotstxt/request_count"], stats["robotstxt/parsed"]) == (1, 1)
    assert seen.parsed == [site.url("/robots.txt")]
    output, code = await robotstxt(
        "history", site.url("/"), "--json", "--store", store, cwd=tmp_path
    )
    assert code == 0, output
    kept = [(entry["file"], entry["sha256"]) for entry in _answers(output)]
    assert kept == [("robots.txt", hashlib.sha256(CRAWLED).hexdigest())], output


def _enabled(*names: str) -> tuple[str, str]:
    """The command's option enabling these downloader middlewares of this module, in order."""
    order = {f"{__name__}.{name}": 50 + 10 * number for number, name in enumerate(names)}
    return ("-s", f"DOWNLOADER_MIDDLEWARES={json.dumps(order)}")


class BreaksOnPath:
    """A downloader middleware with a bug that shows only on requests for ``path``."""

    path: ClassVar[str]

    def process_request(self, request: Request, spider: Any = None) -> None:
        if request.url.endswith(self.path):
            raise AttributeError("'NoneType' object has no attribute 'simulated'")


class BreaksTdmRep(BreaksOnPath):
    path = "/.well-known/tdmrep.json"


@deferred_f_from_coro_f
async def test_a_tdmrep_json_internal_error_drops_the_page_as_the_crawl_does(
    sites, tmp_path
) -> None:
    """A site's tdmrep.json that failed for a reason of ours (a broken downloader
    middleware) drops the site's pages in a crawl (``internal_error``): the
    command's answer has that cause, and ``--page`` does not download the page
    (it answered "allowed" and downloaded it, as if tdmrep.json stated nothing)."""
    site = sites(routes={"/robots.txt": text("User-agent: *\n")}, default=text("page"))
    purposes = ("-s", "ROBOTSTXT_PURPOSES=train-ai")
    output, code = await robotstxt(
        site.url("/a"), "--json", "--page", *purposes, *_enabled("BreaksTdmRep"), cwd=tmp_path
    )
    assert code == EXIT_ERROR, output
    (answer,) = _answers(output)
    assert answer["cause"] == "internal_error", output
    assert answer["tdmrep"]["detail"].startswith("internal error"), output
    assert "internal error" in answer["page"]["error"], output
    assert answer["page"]["internal_error"] is False, output  # not downloaded: not its error
    assert site.count("/a") == 0  # the crawl drops it before download


class BreaksRobotsTxt(BreaksOnPath):
    path = "/robots.txt"


class BreaksPage(BreaksOnPath):
    path = "/breaks"


@deferred_f_from_coro_f
async def test_a_page_download_that_failed_for_a_reason_of_ours_is_an_internal_error(
    sites, tmp_path
) -> None:
    """``--page``: a page whose download failed for a reason of ours (a broken
    downloader middleware) is said to be so in a field of its own
    (``internal_error``), and the command exits with 2; a page the site did not
    serve (``failed``) is not an internal error (exit 5)."""
    site = sites(routes={"/robots.txt": text("User-agent: *\n")}, default=text("page"))
    output, code = await robotstxt(
        site.url("/breaks"), "--json", "--page", *_enabled("BreaksPage"), cwd=tmp_path
    )
    assert code == EXIT_ERROR, output
    (answer,) = _answers(output)
    assert (answer["verdict"], answer["cause"]) == ("allowed", "allowed"), output
    assert answer["page"]["internal_error"] is True, output
    assert answer["page"]["failed"] is False, output
    assert answer["page"]["error"].startswith("internal error: AttributeError"), output
    assert site.count("/breaks") == 0


@deferred_f_from_coro_f
async def test_an_internal_error_is_the_crawls_internal_error_not_the_sites_answer(
    sites, tmp_path, seen
) -> None:
    """A failure that is not the site's answer (a broken downloader middleware) is
    classified as the crawl's site service classifies it: the outcome
    ``internal_error`` (exit 2), counted in ``robotstxt/internal_error`` and
    logged at ERROR; never "unreachable" (RFC 9309 2.3.1.4 speaks of the server)."""
    site = sites(routes={"/robots.txt": text("User-agent: *\n")})
    middlewares = _enabled("SeenByTheCommand", "BreaksRobotsTxt")
    output, code = await robotstxt(site.url("/a"), "--json", *middlewares, cwd=tmp_path)
    assert code == EXIT_ERROR, output
    (answer,) = _answers(output)
    assert (answer["outcome"], answer["cause"]) == ("internal_error", "internal_error"), output
    assert "AttributeError" in answer["detail"]
    assert f"Internal error while fetching {site.url('/robots.txt')}" in output
    assert site.hits == []
    stats = _stats(seen)
    assert stats["robotstxt/internal_error"] == 1
    assert "robotstxt/unreachable" not in stats


@pytest.mark.parametrize("form", [(), ("--lint",)], ids=["answer", "lint"])
@deferred_f_from_coro_f
async def test_a_command_run_is_no_crawl_it_records_nothing_and_opens_no_store(
    sites, tmp_path, seen, form: tuple[str, ...]
) -> None:
    """A project's ``ROBOTSTXT_RECORD_FILE`` proves what its crawls did: a run of
    the command adds nothing to it (not even a header), leaves the crawl's
    ``ROBOTSTXT_REPORT_FILE`` as it was, and opens no store
    (``ROBOTSTXT_STORE_URI``: no SQLite file made). Its crawl has one site
    service, the one-attempt one, which the middlewares share."""
    from scrapy_rfc9309.components.sitefiles._fetch_mode import ONE_ATTEMPT
    from scrapy_rfc9309.components.sitefiles._service import site_service

    site = sites(routes={"/robots.txt": text(CRAWLED)}, default=text("x"))
    record, store = Path(tmp_path) / "record.jsonl", Path(tmp_path) / "robots.db"
    record.write_text('{"type":"a crawl before"}\n')
    report = Path(tmp_path) / "report.json"
    report.write_text('{"spider": "a crawl before"}')
    url = site.url("/robots.txt") if form else site.url("/a")
    output, code = await robotstxt(
        *form,
        url,
        *WATCHED,
        "-s",
        f"ROBOTSTXT_RECORD_FILE={record}",
        "-s",
        f"ROBOTSTXT_STORE_URI=sqlite:///{store}",
        "-s",
        f"ROBOTSTXT_REPORT_FILE={report}",
        "-s",
        'ADDONS={"scrapy_rfc9309.Addon": 100}',  # the extension, which writes the report
        cwd=tmp_path,
    )
    assert code in (0, EXIT_DISALLOWED), output
    assert record.read_text() == '{"type":"a crawl before"}\n'
    assert report.read_text() == '{"spider": "a crawl before"}'
    assert not store.exists()
    (crawler,) = seen.crawlers
    service = site_service(crawler, create=False)
    assert service is not None and service.mode is ONE_ATTEMPT

"""Shared fixtures: real local HTTP sites and a real Scrapy crawl helper."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy import Request, Spider
from scrapy.utils.test import get_crawler

from scrapy_rfc9309.components import _compat
from scrapy_rfc9309.components._clock import Clock, use_clock

from . import profiles  # noqa: F401  (loads the Hypothesis profile)
from .gates import Gate
from .redis_server import RedisServer, require_redis_server
from .server import MockSite

BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"

BASE_SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "DOWNLOADER_MIDDLEWARES": {BUILTIN: None, "scrapy_rfc9309.RobotsTxtMiddleware": 100},
    "RETRY_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
    "CONCURRENT_REQUESTS": 16,
    "DOWNLOAD_TIMEOUT": 10,
}


#: What Scrapy logs (at ERROR) when a signal handler raises; no test's log may hold it.
SIGNAL_HANDLER_ERROR = "Error caught on signal handler"


class _SignalHandlerErrors(logging.Handler):
    """Keeps the :data:`SIGNAL_HANDLER_ERROR` lines logged during a test."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith(SIGNAL_HANDLER_ERROR):
            self.messages.append(message)


@pytest.fixture(autouse=True)
def no_signal_handler_errors() -> Iterator[None]:
    """Every test: no signal handler raised (Scrapy logs and swallows the
    exception, so a crawl goes on without what the handler was to do)."""
    handler = _SignalHandlerErrors()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    assert not handler.messages, handler.messages


#: A value for :func:`crawl` settings that removes the key from the base settings.
UNSET: Any = object()
#: :func:`crawl` settings with the add-on alone enabling the components, as a
#: user's settings do (the base settings' middleware and ROBOTSTXT_OBEY taken off).
ADDON_ONLY: dict[str, Any] = {
    "ADDONS": {"scrapy_rfc9309.Addon": 100},
    "DOWNLOADER_MIDDLEWARES": {},
    "ROBOTSTXT_OBEY": UNSET,
}


class RecordingSpider(Spider):
    """Requests ``urls`` (all at once) and records what came back and why."""

    name = "recording"

    def __init__(self, urls: list[str] = (), meta: dict[str, Any] | None = None, **kwargs: Any):  # type: ignore[assignment]
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.meta = meta or {}
        self.fetched: list[str] = []
        self.dropped: dict[str, str] = {}
        self.followups: dict[str, list[str]] = kwargs.get("followups", {})
        self.dont_filter: bool = kwargs.get("dont_filter", True)

    async def start(self) -> Any:
        for url in self.urls:
            yield self.make(url)

    def make(self, url: str) -> Request:
        return Request(
            url, self.parse, errback=self.failed, meta=dict(self.meta), dont_filter=self.dont_filter
        )

    def parse(self, response: Any) -> Any:
        self.fetched.append(response.url)
        for url in self.followups.get(response.url, []):
            yield self.make(url)

    def failed(self, failure: Any) -> None:
        self.dropped[failure.request.url] = str(failure.value)


async def crawl(
    urls: list[str],
    settings: dict[str, Any] | None = None,
    *,
    allow_errors: bool = False,
    clock: Clock | None = None,
    **spider_kwargs: Any,
) -> tuple[RecordingSpider, dict[str, Any]]:
    """Run a real crawl; return the spider (what it saw) and the final stats.

    ``clock``: the crawl's time (a test's :class:`~.clock.SkippingClock`).

    A crawl that logged an ERROR fails the test (Scrapy logs and swallows
    exceptions raised in signal handlers), unless ``allow_errors``.
    """
    merged = {
        key: value
        for key, value in {**BASE_SETTINGS, **(settings or {})}.items()
        if value is not UNSET
    }
    crawler = get_crawler(RecordingSpider, merged)
    if clock is not None:
        use_clock(crawler, clock)
    await _compat.crawl(crawler, urls=urls, **spider_kwargs)
    assert crawler.stats is not None
    spider = crawler.spider
    assert isinstance(spider, RecordingSpider)
    stats = crawler.stats.get_stats()
    if not allow_errors:
        assert stats.get("log_count/ERROR", 0) == 0, "the crawl logged errors"
    return spider, stats


@pytest.fixture
def sites() -> Iterator[Any]:
    """A factory of started :class:`MockSite`; all are stopped after the test."""
    started: list[MockSite] = []

    def make(host: str = "127.0.0.1", **routes: Any) -> MockSite:
        site = MockSite(host=host)
        site.routes.update(routes.pop("routes", {}))
        site.default = routes.pop("default", None)
        started.append(site.start())
        return site

    yield make
    for site in started:
        site.stop()


@pytest.fixture
def gate() -> Iterator[Any]:
    """A factory of :class:`~.gates.Gate` (``gate(what, timeout=10.0)``); after the
    test, one whose wait gave up fails it, named, even when the crawl swallowed
    the error the wait raised on the store's thread."""
    made: list[Gate] = []

    def make(what: str, timeout: float = 10.0) -> Gate:
        made.append(Gate(what, timeout))
        return made[-1]

    yield make
    missed = [g.what for g in made if g.missed]
    assert not missed, f"gates never opened: {missed}"


#: The first deferral back-off of :func:`fast_backoff` (the code's is 1 s).
FAST_BACKOFF = 0.2


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> float:
    """The deferral back-off starts at :data:`FAST_BACKOFF` s, not 1 s: a real
    crawl's deferral (HTTP: The Definitive Guide ch. 9) plays out 5 times faster."""
    from scrapy_rfc9309.sites import _sitetable

    monkeypatch.setattr(_sitetable, "BACKOFF_FIRST", FAST_BACKOFF)
    return FAST_BACKOFF


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real redis-server for a module's tests (each test uses its own prefix)."""
    with RedisServer(tmp_path_factory.mktemp("redis"), require_redis_server()) as server:
        yield server


@pytest.fixture
def prefix() -> str:
    """A key prefix of the test alone, in a shared redis-server."""
    return f"test-{uuid.uuid4().hex[:8]}:"

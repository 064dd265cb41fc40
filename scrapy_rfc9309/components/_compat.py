"""Every difference between the supported Scrapy releases, in one place.

Supported: Scrapy 2.13.4 to 2.19 on Python 3.10 to 3.13. Each shim names the
release that made it unnecessary, so it can go when that release becomes the
oldest supported one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

__all__ = ["ROBOTS_PARSED", "crawl", "download", "robots_parsed", "send_catch_log_async"]

#: Scrapy's ``signals.robots_parsed`` (2.18+). Before 2.18 Scrapy has no such
#: signal; this object stands in for it, so our middleware still sends it and
#: our extension (Crawl-delay) still receives it.
ROBOTS_PARSED: Any = getattr(signals, "robots_parsed", None) or object()
#: The public name of :data:`ROBOTS_PARSED`: ``scrapy_rfc9309.robots_parsed``.
robots_parsed = ROBOTS_PARSED


async def download(crawler: Crawler, request: Request) -> Response:
    """``crawler.engine.download_async(request)``, which is new in Scrapy 2.14."""
    engine = crawler.engine
    assert engine is not None
    download_async = getattr(engine, "download_async", None)
    if download_async is not None:
        response: Response = await download_async(request)
        return response
    return await maybe_deferred_to_future(engine.download(request))  # Scrapy < 2.14


async def send_catch_log_async(crawler: Crawler, signal: Any, **kwargs: Any) -> None:
    """``crawler.signals.send_catch_log_async``, which is new in Scrapy 2.14."""
    send_async = getattr(crawler.signals, "send_catch_log_async", None)
    if send_async is not None:
        await send_async(signal=signal, **kwargs)
    else:  # Scrapy < 2.14
        await maybe_deferred_to_future(
            crawler.signals.send_catch_log_deferred(signal=signal, **kwargs)
        )


async def crawl(crawler: Crawler, *args: Any, **kwargs: Any) -> None:
    """``crawler.crawl_async(...)``, which is new in Scrapy 2.14."""
    crawl_async = getattr(crawler, "crawl_async", None)
    if crawl_async is not None:
        await crawl_async(*args, **kwargs)
    else:  # Scrapy < 2.14
        await maybe_deferred_to_future(crawler.crawl(*args, **kwargs))

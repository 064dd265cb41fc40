"""The two places where scrapy-rfc9309 reaches into Scrapy's engine. Scrapy glue.

Scrapy has no public call for either; both read attributes present from
Scrapy 2.13 to 2.19 and do nothing when they are missing, so an engine that
changes them loses the optimisation, never the crawl:

* :func:`wake_engine`: ``engine._slot.nextcall`` (private);
* :func:`robots_download`: ``engine.downloader.total_concurrency`` (public
  attribute, not documented).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["robots_download", "wake_engine"]


def wake_engine(crawler: Any) -> None:
    """Ask the engine to take requests from the scheduler again, now.

    Scrapy's engine wakes after every download and every 5 s; a site can
    settle a few reactor turns after its robots.txt download ended (parsing
    runs in slices), and its requests are then ready in the scheduler.
    """
    engine = getattr(crawler, "engine", None)
    slot = getattr(engine, "_slot", None)
    schedule = getattr(getattr(slot, "nextcall", None), "schedule", None)
    if schedule is not None:
        schedule()


@contextmanager
def robots_download(crawler: Any) -> Iterator[None]:
    """While a robots.txt downloads, it does not count against the pages'
    ``CONCURRENT_REQUESTS``.

    ``engine.download_async`` puts the robots.txt request in
    ``downloader.active`` (never held back by ``CONCURRENT_REQUESTS``, but
    counted in it), so the engine would take that many fewer pages from the
    scheduler while robots.txt files download: with robots.txt answering in
    300 ms, the crawl's concurrency would go to waiting. The downloader's
    total concurrency is raised by one for the time of the download instead;
    ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` bounds how many run at once.
    """
    downloader: Any = getattr(getattr(crawler, "engine", None), "downloader", None)
    total = getattr(downloader, "total_concurrency", None)
    if not isinstance(total, int) or total <= 0:  # 0: no limit
        yield
        return
    downloader.total_concurrency += 1
    try:
        yield
    finally:
        downloader.total_concurrency -= 1

"""The two places where scrapy-rfc9309 reaches into Scrapy's engine. Scrapy glue.

Scrapy has no public call for either; both read attributes present from
Scrapy 2.13 to 2.19 and do nothing when they are missing, so an engine that
changes them loses the optimisation, never the crawl:

* :func:`wake_engine`: ``engine._slot.nextcall`` (private);
* :func:`robots_download`: ``engine.downloader.total_concurrency`` (public
  attribute, not documented);
* :func:`release_robots_slot`: ``engine.downloader.slots`` (public attribute)
  and ``Slot.close()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "ROBOTS_SLOT_PREFIX",
    "page_slot_key",
    "release_robots_slot",
    "robots_download",
    "robots_slot_key",
    "wake_engine",
]

#: The download slot of a robots.txt request starts with this: each site's
#: robots.txt has a slot of its own, so it never takes (or waits for) a
#: transfer of the pages' slot of the same host.
ROBOTS_SLOT_PREFIX = "robots.txt "


def robots_slot_key(site: str) -> str:
    """The download slot (``meta["download_slot"]``) of ``site``'s robots.txt.

    Scrapy's downloader gives a host's requests one slot, and
    ``CONCURRENT_REQUESTS_PER_DOMAIN`` transfers in it: with ``1``, a
    robots.txt that hangs would hold every page of that host (other ports,
    other schemes: other sites) for ``DOWNLOAD_TIMEOUT``. One robots.txt
    download per site is in flight at most (and at most
    ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` in all), so a slot of its own adds at
    most one request to the host at a time.
    """
    return ROBOTS_SLOT_PREFIX + site


def page_slot_key(downloader: Any, request: Any) -> str:
    """The pages' download slot of ``request``'s host, also for a robots.txt request."""
    slot = request.meta.get("download_slot")
    if isinstance(slot, str) and slot.startswith(ROBOTS_SLOT_PREFIX):
        request = request.replace(
            meta={key: value for key, value in request.meta.items() if key != "download_slot"}
        )
    return str(downloader.get_slot_key(request))


def release_robots_slot(crawler: Any, key: str) -> None:
    """Forget a robots.txt download slot once idle (Scrapy would keep it for
    about a minute): slots never outnumber the robots.txt downloads in flight."""
    downloader: Any = getattr(getattr(crawler, "engine", None), "downloader", None)
    slots = getattr(downloader, "slots", None)
    if not isinstance(slots, dict):
        return
    slot = slots.get(key)
    if slot is None or getattr(slot, "active", None) or getattr(slot, "queue", None):
        return
    del slots[key]
    close = getattr(slot, "close", None)
    if close is not None:
        close()


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

"""Where scrapy-rfc9309 reaches into Scrapy's engine and downloader. Scrapy glue.

Scrapy has no public call for any of these; each reads attributes present
from Scrapy 2.13 to 2.19 and does nothing (or falls back) when they are
missing, so an engine that changes them loses the optimisation, never the
crawl:

* :func:`wake_engine`: ``engine._slot.nextcall`` (private);
* :func:`add_to_total_concurrency`:
  ``engine.downloader.total_concurrency`` (public attribute, not documented);
* :func:`release_file_slot`: ``engine.downloader.slots`` (public attribute),
  ``Slot.queue`` and ``Slot.close()``;
* :func:`engine_is_closing`: ``engine._slot.closing`` (private);
* :func:`watch_scheduler`: ``engine._slot.scheduler`` (private) and its
  public ``next_request``;
* :func:`page_slot_concurrency`, :func:`in_downloader`:
  ``engine.downloader.slots``, ``.per_slot_settings``, ``.active`` (public
  attributes, not documented);
* :func:`url_slot_key`: ``engine.downloader.ip_concurrency`` (public
  attribute, not documented) and Scrapy's ``dnscache``, as the downloader's
  ``get_slot_key`` reads them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, NamedTuple, get_args

from scrapy.resolver import dnscache
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

__all__ = [
    "FILES",
    "FileName",
    "add_to_total_concurrency",
    "downloader_of",
    "engine_is_closing",
    "engine_of",
    "file_slot",
    "file_slot_key",
    "in_downloader",
    "page_slot_concurrency",
    "page_slot_key",
    "release_file_slot",
    "url_slot_key",
    "wake_engine",
    "watch_scheduler",
]

#: The files fetched per site apart from its pages. The download slot of
#: each one's request is the file's name, a space, and the site: each site's
#: robots.txt and tdmrep.json have slots of their own, so they never take (or
#: wait for) a transfer of the pages' slot of the same host.
FileName = Literal["robots.txt", "tdmrep.json"]
FILES: tuple[FileName, ...] = get_args(FileName)
_SLOT_PREFIXES = tuple(name + " " for name in FILES)


def file_slot_key(name: FileName, site: str) -> str:
    """The download slot (``meta["download_slot"]``) of ``site``'s file ``name``
    (one of :data:`FILES`), e.g. ``robots.txt https://example.com``.

    Scrapy's downloader gives a host's requests one slot, and
    ``CONCURRENT_REQUESTS_PER_DOMAIN`` transfers in it: with ``1``, a
    robots.txt or tdmrep.json that hangs would hold every page of that host
    (other ports, other schemes: other sites) for ``DOWNLOAD_TIMEOUT``. One
    download of each file per site is in flight at most (and at most
    ``ROBOTSTXT_CONCURRENT_DOWNLOADS`` of each in all), so slots of their own
    add at most one request per file to the host at a time.
    """
    return f"{name} {site}"


def page_slot_key(downloader: Any, request: Any) -> str:
    """The pages' download slot of ``request``'s host, also for a robots.txt or
    tdmrep.json request."""
    slot = request.meta.get("download_slot")
    if isinstance(slot, str) and slot.startswith(_SLOT_PREFIXES):
        request = request.replace(
            meta={key: value for key, value in request.meta.items() if key != "download_slot"}
        )
    return str(downloader.get_slot_key(request))


def url_slot_key(downloader: Any, request: Any) -> str | None:
    """The pages' download slot of ``request``'s host whatever slot the request
    is in: ``meta["download_slot"]`` may name another (one the spider chose, or
    the first host's, which Scrapy keeps on a request redirected to another
    host); ``None`` for a robots.txt or tdmrep.json request (its own slot) or
    when the downloader does not say (another downloader)."""
    slot = request.meta.get("download_slot")
    if isinstance(slot, str) and slot.startswith(_SLOT_PREFIXES):
        return None
    key = urlparse_cached(request).hostname or ""
    if getattr(downloader, "ip_concurrency", 0):  # as Scrapy's get_slot_key
        key = dnscache.get(key, key)
    return key


@contextmanager
def file_slot(crawler: Any, name: FileName, site: str) -> Iterator[str]:
    """The download slot key of ``site``'s file ``name`` (:func:`file_slot_key`),
    released (:func:`release_file_slot`) when the block ends."""
    key = file_slot_key(name, site)
    try:
        yield key
    finally:
        release_file_slot(crawler, key)


def release_file_slot(crawler: Any, key: str) -> None:
    """Forget a robots.txt or tdmrep.json download slot once its download has
    ended (Scrapy would keep it for about a minute): slots never outnumber the
    downloads in flight.

    A download given up while it waited in the slot's queue (a retry that a
    slot delay holds, cancelled by ``ROBOTSTXT_DOWNLOAD_TIMEOUT`` or at close)
    stays in Scrapy's queue, which would still send it once the delay ends:
    the site would get a request nobody reads. One download of each file per
    site is in flight at most, so whatever is left in the queue when it ends
    is given up: it is taken out (its waiter cancelled) and the slot's timer
    stopped."""
    downloader: Any = downloader_of(crawler)
    slots = getattr(downloader, "slots", None)
    if not isinstance(slots, dict):
        return
    slot = slots.get(key)
    if slot is None:
        return
    _drop_queued(slot)
    close = getattr(slot, "close", None)
    if close is not None:
        close()
    if not getattr(slot, "active", None):  # else still unwinding: Scrapy forgets it
        del slots[key]


def _drop_queued(slot: Any) -> None:
    """Take every request out of a download slot's queue, cancelling what
    waits for it (``(request, Deferred)`` pairs, Scrapy 2.13 to 2.19)."""
    queue = getattr(slot, "queue", None)
    if not isinstance(queue, deque) or not queue:
        return
    entries = list(queue)
    queue.clear()
    for entry in entries:
        waiter = entry[1] if isinstance(entry, tuple) and len(entry) == 2 else None
        if isinstance(waiter, Deferred) and not waiter.called:
            waiter.cancel()


def wake_engine(crawler: Any) -> None:
    """Ask the engine to take requests from the scheduler again, now.

    Scrapy's engine wakes after every download and every 5 s; a site can
    settle a few reactor turns after its robots.txt download ended (parsing
    runs in slices), and its requests are then ready in the scheduler.
    """
    slot = getattr(engine_of(crawler), "_slot", None)
    schedule = getattr(getattr(slot, "nextcall", None), "schedule", None)
    if schedule is not None:
        schedule()


def watch_scheduler(crawler: Any, seen: Callable[[Any], None]) -> bool:
    """Tell ``seen`` of each request the crawl's scheduler hands the engine
    (its ``next_request`` wrapped on the instance); ``False``: not done (no
    engine or scheduler yet, or one that does not have them). Requests the
    engine downloads without the scheduler (``engine.download_async``) are not
    told."""
    slot = getattr(engine_of(crawler), "_slot", None)
    scheduler: Any = getattr(slot, "scheduler", None)
    next_request = getattr(scheduler, "next_request", None)
    if not callable(next_request):
        return False

    def handed_out() -> Any:
        request = next_request()
        if request is not None:
            seen(request)
        return request

    scheduler.next_request = handed_out
    return True


def add_to_total_concurrency(crawler: Any, delta: int) -> bool:
    """Add ``delta`` to the downloader's total concurrency (``CONCURRENT_REQUESTS``
    as Scrapy's downloader applies it); ``False``: nothing done (no limit, or
    no such attribute)."""
    downloader: Any = downloader_of(crawler)
    total = getattr(downloader, "total_concurrency", None)
    if not isinstance(total, int) or total <= 0:  # 0: no limit
        return False
    downloader.total_concurrency = total + delta
    return True


def engine_is_closing(crawler: Any) -> bool:
    """Whether the engine is closing the spider.

    Scrapy has no signal for this: the engine waits for every request in
    progress before ``spider_closed``, and requests held for a robots.txt
    would hold the close. ``engine._slot.closing`` is what Scrapy's own engine
    status report reads; if it is missing the engine is treated as open.
    """
    engine = engine_of(crawler)
    if engine is None or not engine.running:
        return True
    slot = getattr(engine, "_slot", None)
    return slot is not None and getattr(slot, "closing", None) is not None


def engine_of(crawler: Any) -> Any:
    """The crawl's engine, ``None`` before it is made (Scrapy 2.13 holds
    ``None`` until then; 2.19 raises ``RuntimeError`` when it is read)."""
    try:
        return getattr(crawler, "engine", None)
    except RuntimeError:  # Scrapy 2.19: not set yet
        return None


def downloader_of(crawler: Any) -> Any:
    """The crawl's downloader, ``None`` before the engine is made."""
    return getattr(engine_of(crawler), "downloader", None)


class _PageSlot(NamedTuple):
    """A request's pages download slot as Scrapy's downloader has it."""

    #: the downloader
    downloader: Any
    #: the slot (``None``: not made yet)
    slot: Any
    #: its ``DOWNLOAD_SLOTS`` entry (empty when it has none)
    settings: dict[str, Any]


def _page_slot(crawler: Any, request: Any) -> _PageSlot | None:
    """The one look-up of ``request``'s download slot, for
    :func:`page_slot_concurrency` and :func:`page_slot_delayed`; ``None``
    before the engine is made, or with another downloader (no such attributes)."""
    downloader = downloader_of(crawler)
    if downloader is None:
        return None
    try:
        key = downloader.get_slot_key(request)
        slot = downloader.slots.get(key)
        settings = getattr(downloader, "per_slot_settings", None) or {}
        return _PageSlot(downloader, slot, settings.get(key) or {})
    except (AttributeError, TypeError, ValueError):
        return None


def page_slot_concurrency(crawler: Any, request: Any) -> int:
    """The concurrency of ``request``'s download slot as Scrapy's downloader
    gives it (``CONCURRENT_REQUESTS_PER_DOMAIN``, per IP, or ``DOWNLOAD_SLOTS``);
    1 when unknown."""
    found = _page_slot(crawler, request)
    if found is None:
        return 1
    try:
        if found.slot is not None:
            return max(1, int(found.slot.concurrency))
        downloader = found.downloader
        default = downloader.ip_concurrency or downloader.domain_concurrency
        return max(1, int(found.settings.get("concurrency", default)))
    except AttributeError:  # another downloader: no such attributes
        return 1


def page_slot_delayed(crawler: Any, request: Any) -> bool:
    """Whether ``request``'s download slot spaces its requests (a delay: the
    slot's own, set from a Crawl-delay or AutoThrottle, or ``DOWNLOAD_DELAY`` /
    ``DOWNLOAD_SLOTS`` for a slot not made yet); ``False`` when unknown."""
    found = _page_slot(crawler, request)
    if found is None:
        return False
    try:
        if found.slot is not None:
            return float(found.slot.delay) > 0
        delay = found.settings.get("delay", crawler.settings.getfloat("DOWNLOAD_DELAY"))
        return float(delay) > 0
    except (AttributeError, TypeError, ValueError):  # another downloader
        return False


def in_downloader(crawler: Any, request: Any) -> bool:
    """Whether ``request``, handed to the engine, is still in its downloader
    (its middlewares, its slot's queue, or its transfer); ``False`` when
    unknown."""
    active = getattr(downloader_of(crawler), "active", None)
    return active is not None and request in active

"""The (a) throughput's ``floor``: components of the add-on's shape doing no work.

What any robots.txt handler built as the add-on is (a downloader middleware
that may wait, a spider middleware that reads each response and filters its
output, a scheduler queue in front of Scrapy's) pays on this crawl before it
decides anything: each component's call per request, as Scrapy makes it,
and each site's robots.txt downloaded (as a plain request, read by
nothing). The add-on against this mode is what its own work costs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy.pqueues import ScrapyPriorityQueue


class WaitingMiddleware:
    """A downloader middleware whose ``process_request`` is a coroutine, as the
    add-on's is (it may wait for a robots.txt), deciding nothing."""

    async def process_request(self, request: Any, spider: Any = None) -> None:
        return None


class ReadingMiddleware:
    """A spider middleware that sees each response and passes its output on,
    as the add-on's page-directive middleware does, reading nothing."""

    def process_spider_input(self, response: Any, spider: Any = None) -> None:
        return None

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        yield from result

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for output in result:
            yield output


class WrappingQueue:
    """A scheduler priority queue in front of Scrapy's, as the add-on's is."""

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> WrappingQueue:
        return cls(crawler, *args, **kwargs)

    def __init__(self, crawler: Any, *args: Any, **kwargs: Any) -> None:
        # Scrapy's queue, built with what Scrapy's scheduler passes this one
        self._ready = ScrapyPriorityQueue(crawler, *args, **kwargs)

    def push(self, request: Any) -> None:
        self._ready.push(request)

    def pop(self) -> Any:
        return self._ready.pop()

    def peek(self) -> Any:
        return self._ready.peek()

    def close(self) -> Any:
        return self._ready.close()

    def __len__(self) -> int:
        return len(self._ready)

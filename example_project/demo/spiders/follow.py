"""A link-following spider that says, for each request robots.txt dropped, why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response
from twisted.python.failure import Failure


class FollowSpider(Spider):
    name = "follow"

    def __init__(self, start_url: str = "http://127.0.0.1:8000/", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_url = start_url

    async def start(self) -> Any:
        yield Request(self.start_url, errback=self.dropped)

    def parse(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, errback=self.dropped)

    def dropped(self, failure: Failure) -> None:
        self.logger.info("Not fetched %s: %s", failure.request.url, failure.value)

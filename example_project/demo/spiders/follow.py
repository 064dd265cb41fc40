"""A link-following spider that says, for each URL it fetched, which robots.txt
line allowed it. Dropped URLs are logged by the middleware itself, with the
deciding line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response


class FollowSpider(Spider):
    name = "follow"

    def __init__(self, start_url: str = "http://127.0.0.1:8000/", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_url = start_url

    async def start(self) -> Any:
        yield self.request(self.start_url)

    def request(self, url: str) -> Request:
        # Ask the middleware for the deciding line of allowed requests too.
        return Request(url, meta={"robotstxt_explain": True})

    def parse(self, response: Response) -> Iterator[Any]:
        verdict = response.meta.get("robotstxt_verdict")
        if verdict is not None and verdict.line is not None:
            why = f'allowed by robots.txt line {verdict.line}: "{verdict.rule}"'
        else:
            why = "allowed: no rule of the groups that apply to this crawler matches"
        self.logger.info("Fetched %s: %s", response.url, why)
        yield {"url": response.url, "title": response.css("title::text").get()}
        for href in response.css("a::attr(href)").getall():
            yield self.request(response.urljoin(href))

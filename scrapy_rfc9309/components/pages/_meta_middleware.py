"""``RobotsMetaMiddleware``: page-level robots directives (robots META tag, ``X-Robots-Tag``,
``Robots-Tag``).

HTTP: The Definitive Guide ch. 9 ("Robot META directives"): a page may ask
robots not to follow its links (NOFOLLOW), not to index it (NOINDEX) and not
to keep a copy (NOARCHIVE). Thin glue over :mod:`._page_directives`:

* before the callback, the directives that apply to our product token are
  read (headers and the HTML head only, one bounded pass) and exposed as
  ``response.meta["robots_meta"]``;
* nofollow: every request the callback yields for that response is dropped
  (unless ``meta["dont_obey_robotstxt"]``), logged and counted;
* noindex: with ``ROBOTS_META_NOINDEX = "drop"``, every item it yields is
  dropped, logged and counted;
* noarchive: the HTTP cache policy of :mod:`._cache_policy` does not store
  the response (and flags it ``noarchive``); such pages are counted here.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy.exceptions import NotConfigured
from scrapy.http import Request

from ...parser._directives import (
    EMPTY,
    LENIENT_EMPTY_PARAMETER,
    LENIENT_SEMICOLON,
    LENIENT_SPACE,
    NOFOLLOW,
    NOINDEX,
    ROBOTS_TAG_IGNORED,
    PageDirectives,
)
from ...parser._page_directives import read_page_directives as read_page_directives
from ...parser._usage import NO_PREFERENCES, Preference, Usage
from ...parser._usage_decision import UsageSources, decide_usage
from ...parser._usage_signals import read_usage_signals
from ...sites._site import site_of
from .._report import report_for
from ..record._crawl_record import crawl_record
from ..settings._component_settings import httpcache_honours_noarchive
from ..settings._crawler_settings import robotstxt_settings
from ..settings._start_up import start_up_errors_logged
from ..sitefiles._service import site_service
from ..sitefiles._usage_gate import USAGE_META_KEY, USAGE_SOURCES_META_KEY

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["META_KEY", "RobotsMetaMiddleware", "directives_of_response"]

logger = logging.getLogger("scrapy_rfc9309.meta")

#: ``response.meta`` key of the frozenset of directives.
META_KEY = "robots_meta"

#: How each lenient reading is described in the log.
_LENIENT_FORMS = {
    LENIENT_SEMICOLON: "';' read as a separator (meta-semicolon; the syntax is comma-separated)",
    LENIENT_SPACE: "a blank read as a separator between known directives (meta-space; "
    "the syntax is comma-separated)",
    LENIENT_EMPTY_PARAMETER: "a Robots-Tag ';' that no parameter follows ignored "
    "(robots-tag-empty-parameter; RFC 9651 does not allow it)",
    ROBOTS_TAG_IGNORED: "a Robots-Tag value that is no Structured Fields List ignored "
    "whole (RFC 9651 4.2: a field that fails parsing is ignored)",
}


def directives_of_response(
    response: Response, token: str, also: tuple[str, ...] = ()
) -> PageDirectives:
    """:func:`~._page_directives.read_page_directives` for a Scrapy response
    (``also``: the ``ROBOTSTXT_ALSO_OBEY`` tokens, whose directives apply too)."""
    return read_page_directives(
        response.url, response.status, response.headers, response.body, token, also=also
    )


class RobotsMetaMiddleware:
    """Spider middleware: obey nofollow, noindex and noarchive for our agent token.

    On when ``ROBOTS_META_OBEY`` is true (default: the value of
    ``ROBOTSTXT_OBEY``). The token is the one the robots.txt middleware
    obeys: ``ROBOTSTXT_USER_AGENT``, or the product in the request's
    User-Agent.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.settings = robotstxt_settings(crawler)
        if not self.settings.meta_obey:
            if crawler.settings.get("ROBOTS_META_OBEY") is not None:  # the user's choice
                logger.info("Page-level robots directives are not read: ROBOTS_META_OBEY is off")
                raise NotConfigured  # no message: Scrapy then says nothing more
            # Scrapy says it at WARNING: off only because ROBOTSTXT_OBEY is
            raise NotConfigured("ROBOTS_META_OBEY is off (unset, it follows ROBOTSTXT_OBEY)")
        self.stats = crawler.stats
        self.drop_noindex = self.settings.meta_noindex == "drop"
        self._pages: WeakKeyDictionary[Response, PageDirectives] = WeakKeyDictionary()
        #: ROBOTSTXT_PURPOSES: responses whose preferences refuse a declared purpose
        self.purposes = self.settings.purposes
        self._refused: WeakKeyDictionary[Response, Preference] = WeakKeyDictionary()
        self._crawler = crawler
        #: ROBOTSTXT_RECORD_FILE: what each page said and what was dropped for it
        service = site_service(crawler, create=False)  # made first, by the downloader's
        self._record = crawl_record(crawler, None if service is None else service.clock)
        self._limits_told: frozenset[str] = frozenset()
        self._lenient_told: frozenset[str] = frozenset()
        logger.info(
            "Obeying page-level robots directives (robots META tag, X-Robots-Tag, Robots-Tag) "
            "as %s; "
            "items of noindex pages: %s (ROBOTS_META_NOINDEX)%s",
            self.settings.describe_token(),
            self.settings.meta_noindex,
            "; noai and noimageai refuse train-ai (ROBOTS_META_NOAI)"
            if self.settings.meta_noai
            else "",
        )

        settings = crawler.settings
        if settings.getbool("HTTPCACHE_ENABLED") and not httpcache_honours_noarchive(settings):
            logger.warning(
                "HTTPCACHE_ENABLED, but HTTPCACHE_POLICY %r does not honour noarchive: pages "
                "marked noarchive will be stored. Enable the add-on, or set HTTPCACHE_POLICY = "
                '"scrapy_rfc9309.RobotsMetaCachePolicy" (it wraps ROBOTS_META_HTTPCACHE_POLICY)',
                settings.get("HTTPCACHE_POLICY"),
            )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsMetaMiddleware:
        with start_up_errors_logged():
            return cls(crawler)

    # -- input: read the page's directives ---------------------------------------------

    def process_spider_input(self, response: Response, spider: Any = None) -> None:
        request = response.request
        if request is None:
            return
        token = self.settings.token_of(request)
        page = directives_of_response(response, token, self.settings.also_obey)
        unread = self._read_usage(response, request, page) if self.purposes else {}
        request.meta[META_KEY] = page.directives
        if self._record is not None:
            self._record_page(response, request, page)
        if page.truncated or unread:
            self._truncated(response, page, unread)
        if page is EMPTY:
            return
        if page.lenient:
            self._lenient(response, page)
        if not page.directives:
            return
        if page.nofollow or (page.noindex and self.drop_noindex):
            self._pages[response] = page  # only pages whose outputs are filtered
        for directive in (NOFOLLOW, NOINDEX):
            if directive in page.directives:
                self._inc(f"robotsmeta/pages/{directive}")
        if page.noarchive:
            self._inc("robotsmeta/noarchive")

    def _record_page(self, response: Response, request: Request, page: PageDirectives) -> None:
        """The record's ``page`` line: the status, the directives read and where
        from, the usage in force and its refusal, and what the crawl does."""
        refusal = self._refused.get(response)
        actions = []
        if page.nofollow:
            actions.append("links not followed (nofollow)")
        if page.noindex and self.drop_noindex:
            actions.append("items dropped (noindex)")
        if refusal is not None:
            actions.append("items dropped (usage refused)")
        usage = request.meta.get(USAGE_META_KEY) if self.purposes else None
        assert self._record is not None
        self._record.page(
            request,
            {
                "url": response.url,
                "status": response.status,
                "directives": sorted(page.directives),
                "sources": {name: list(where) for name, where in sorted(page.sources.items())},
                "usage": usage.as_dict() if isinstance(usage, Usage) else None,
                "refusal": None if refusal is None else refusal.describe(),
                "actions": actions,
            },
        )

    def _truncated(
        self, response: Response, page: PageDirectives, unread: Mapping[str, frozenset[str]]
    ) -> None:
        """A limit of the reading was met: content past it was not read. ``unread``:
        the usage headers read only in part (with ``ROBOTSTXT_PURPOSES``), whose
        unread values are taken to refuse what they can state (fail closed)."""
        met = page.truncated | {
            f"{limit} ({source})" for source, limits in unread.items() for limit in limits
        }
        first = met - self._limits_told
        self._limits_told |= met
        logger.log(
            logging.INFO if first else logging.DEBUG,
            "Read the robots directives of %(page)s only in part: %(limits)s reached; a "
            "robots META tag, X-Robots-Tag or Robots-Tag value (with ROBOTSTXT_PURPOSES, a "
            "tdm-reservation "
            "meta too) past it is not obeyed%(usage)s%(once)s",
            {
                "page": response.url,
                "limits": ", ".join(sorted(met)),
                "usage": "; a usage header past it is not read, so the declared purposes it "
                "could refuse are refused (fail closed, ROBOTSTXT_PURPOSES)"
                if unread
                else "",
                "once": " (said once per limit at INFO, then at DEBUG)" if first else "",
            },
        )
        self._inc("robotsmeta/truncated")

    def _lenient(self, response: Response, page: PageDirectives) -> None:
        """A form outside the directives' syntax was read (``LENIENT(<id>)``)."""
        first = page.lenient - self._lenient_told
        self._lenient_told |= page.lenient
        logger.log(
            logging.INFO if first else logging.DEBUG,
            "Read %(page)s's robots directives leniently: %(forms)s%(once)s",
            {
                "page": response.url,
                "forms": ", ".join(_LENIENT_FORMS.get(name, name) for name in sorted(page.lenient)),
                "once": " (said once at INFO, then at DEBUG)" if first else "",
            },
        )

    def _read_usage(
        self, response: Response, request: Request, page: PageDirectives
    ) -> dict[str, frozenset[str]]:
        """``meta["usage"]``: the site's preferences (robots.txt, tdmrep.json) with the
        response's own (``Content-Usage``, ``tdm-reservation`` header or meta; with
        ``ROBOTS_META_NOAI``, ``noai`` / ``noimageai`` directives), merged by
        :func:`~._usage_decision.decide_usage` as ``scrapy robotstxt --page`` does.
        Returns the usage headers read only in part (a limit met), with the
        limits: they refuse what they can state (fail closed)."""
        unread: dict[str, frozenset[str]] = {}
        found = read_usage_signals(response.status, response.headers, response.body, unread)
        sources = request.meta.get(USAGE_SOURCES_META_KEY)
        if not isinstance(sources, UsageSources):  # no robots.txt check (or another's usage)
            stated = request.meta.get(USAGE_META_KEY)
            sources = UsageSources(
                robots_txt=stated if isinstance(stated, Usage) else NO_PREFERENCES
            )
        sources = sources.with_page(found, unread)
        if self.settings.meta_noai:
            sources = sources.with_noai(page.sources)
        decision = decide_usage(sources, self.purposes)
        request.meta[USAGE_META_KEY] = decision.usage
        site = site_of(response.url)
        if site is not None and decision.usage:  # the JSON report: what each source stated
            report_for(self._crawler).usage_stated(site, decision.usage.preferences.values())
        refusal = decision.refusal
        if refusal is not None:
            self._refused[response] = refusal
            self._inc("robotsmeta/pages/usage")
        return unread

    # -- output: drop what the page asked not to be followed / indexed -------------------

    def _without_refused_items(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        refusal = self._refused.get(response)
        if refusal is None:
            yield from result
            return
        for output in result:
            if isinstance(output, Request) or self._keep_usage(response, refusal):
                yield output

    async def _without_refused_items_async(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        refusal = self._refused.get(response)
        async for output in result:
            if (
                refusal is None
                or isinstance(output, Request)
                or self._keep_usage(response, refusal)
            ):
                yield output

    def _keep_usage(self, response: Response, refusal: Preference) -> bool:
        logger.debug(
            "Dropped an item of %(page)s: usage preference %(preference)s refuses a declared "
            "purpose (ROBOTSTXT_PURPOSES)",
            {"page": response.url, "preference": refusal.describe()},
        )
        self._inc("robotsmeta/usage")
        if self._record is not None:
            self._record.page_drop(response.url, "item", None, f"usage: {refusal.describe()}")
        site = site_of(response.url)
        if site is not None:
            report_for(self._crawler).item_dropped_by_usage(site, refusal.describe())
        return False

    def process_spider_output(
        self, response: Response, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        if self.purposes:
            result = self._without_refused_items(response, result)
        page = self._pages.get(response)
        if page is None or not (page.nofollow or (page.noindex and self.drop_noindex)):
            yield from result
            return
        for output in result:
            if self._keep(response, page, output):
                yield output

    async def process_spider_output_async(
        self, response: Response, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        if self.purposes:
            result = self._without_refused_items_async(response, result)
        page = self._pages.get(response)
        if page is None or not (page.nofollow or (page.noindex and self.drop_noindex)):
            async for output in result:
                yield output
            return
        async for output in result:
            if self._keep(response, page, output):
                yield output

    def _keep(self, response: Response, page: PageDirectives, output: Any) -> bool:
        if isinstance(output, Request):
            if not page.nofollow or output.meta.get("dont_obey_robotstxt"):
                return True
            logger.debug(
                "Not following %(request)s from %(page)s: nofollow (%(source)s)",
                {"request": output, "page": response.url, "source": page.source_of(NOFOLLOW)},
            )
            self._inc("robotsmeta/nofollow")
            if self._record is not None:
                self._record.page_drop(response.url, "link", output.url, "nofollow")
            return False
        if not (page.noindex and self.drop_noindex):
            return True
        logger.debug(
            "Dropped an item of %(page)s: noindex (%(source)s; ROBOTS_META_NOINDEX = 'drop')",
            {"page": response.url, "source": page.source_of(NOINDEX)},
        )
        self._inc("robotsmeta/noindex")
        if self._record is not None:
            self._record.page_drop(response.url, "item", None, "noindex")
        return False

    def _inc(self, key: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(key)

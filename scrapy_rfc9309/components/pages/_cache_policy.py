"""``RobotsMetaCachePolicy``: Scrapy's HTTP cache does not store noarchive responses.

HTTP: The Definitive Guide ch. 9: NOARCHIVE asks robots not to keep a copy
of the page. This policy wraps the configured ``HTTPCACHE_POLICY`` (named in
``ROBOTS_META_HTTPCACHE_POLICY``; the add-on moves it there and installs this
one) and refuses to store a response whose ``X-Robots-Tag`` or ``Robots-Tag`` headers or robots
META tags say ``noarchive`` to our agent token (the HTML head is read from the
body as received, gzip or deflate decoded). Everything else is the wrapped
policy's decision. A response not stored gets the flag ``noarchive``.

A copy stored before (by a run without this policy, or before the page said
noarchive) whose directives say ``noarchive`` is never served: it is neither
fresh nor valid, so the page is downloaded again (and that response, if still
noarchive, is not stored).

By hand::

    HTTPCACHE_POLICY = "scrapy_rfc9309.RobotsMetaCachePolicy"
    ROBOTS_META_HTTPCACHE_POLICY = "scrapy.extensions.httpcache.RFC2616Policy"
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from ...parser._directives import NOARCHIVE
from ...parser._html_head import head_of_body
from ...parser._page_directives import read_page_directives
from ..settings._component_settings import wrapped_cache_policy
from ..settings._settings import RobotsTxtSettings

if TYPE_CHECKING:
    from scrapy.http import Request, Response
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULT_WRAPPED_POLICY", "RobotsMetaCachePolicy"]

logger = logging.getLogger("scrapy_rfc9309.meta")

DEFAULT_WRAPPED_POLICY = "scrapy.extensions.httpcache.DummyPolicy"
#: Flag added to a response that was not stored because of noarchive.
NOT_STORED_FLAG = "noarchive"


class RobotsMetaCachePolicy:
    """An HTTP cache policy that never stores noarchive responses, wrapping another."""

    def __init__(self, settings: BaseSettings) -> None:
        # Scrapy gives a cache policy the settings, not the crawler: read here,
        # pure; the warnings are the crawler's, logged where its components read them
        self.settings = RobotsTxtSettings.from_settings(settings)
        policy_class = wrapped_cache_policy(settings, DEFAULT_WRAPPED_POLICY)
        if policy_class is RobotsMetaCachePolicy:
            policy_class = load_object(DEFAULT_WRAPPED_POLICY)
        self.wrapped: Any = policy_class(settings)
        self.obey = self.settings.meta_obey

    def should_cache_request(self, request: Request) -> bool:
        return bool(self.wrapped.should_cache_request(request))

    def should_cache_response(self, response: Response, request: Request) -> bool:
        if not self.wrapped.should_cache_response(response, request):
            return False
        source = self._noarchive(response, request)
        if source is None:
            return True
        logger.debug(
            "Not storing %(url)s in the HTTP cache: noarchive (%(source)s)",
            {"url": response.url, "source": source},
        )
        if NOT_STORED_FLAG not in response.flags:
            response.flags.append(NOT_STORED_FLAG)
        return False

    def _noarchive(self, response: Response, request: Request) -> str | None:
        """Where ``response``'s noarchive for our token came from; ``None`` if it has
        none (or page-level directives are not obeyed)."""
        if not self.obey:
            return None
        token = self.settings.token_of(request)
        encoding = response.headers.get(b"Content-Encoding")
        head = head_of_body(response.body, encoding.decode("latin-1") if encoding else None)
        page = read_page_directives(
            response.url,
            response.status,
            response.headers,
            head,
            token,
            also=self.settings.also_obey,
        )
        return page.source_of(NOARCHIVE) if page.noarchive else None

    def _stored_noarchive(self, cachedresponse: Response, request: Request) -> bool:
        """Whether a stored copy says noarchive: it is then never served."""
        if NOT_STORED_FLAG in cachedresponse.flags:
            return True
        source = self._noarchive(cachedresponse, request)
        if source is None:
            return False
        logger.debug(
            "Not serving %(url)s from the HTTP cache: the stored copy says noarchive "
            "(%(source)s); downloading it again",
            {"url": cachedresponse.url, "source": source},
        )
        cachedresponse.flags.append(NOT_STORED_FLAG)
        return True

    def is_cached_response_fresh(self, cachedresponse: Response, request: Request) -> bool:
        if self._stored_noarchive(cachedresponse, request):
            return False
        return bool(self.wrapped.is_cached_response_fresh(cachedresponse, request))

    def is_cached_response_valid(
        self, cachedresponse: Response, response: Response, request: Request
    ) -> bool:
        if self._stored_noarchive(cachedresponse, request):
            return False  # the new download is used (and stored unless noarchive)
        return bool(self.wrapped.is_cached_response_valid(cachedresponse, response, request))

    def __getattr__(self, name: str) -> Any:
        # Anything else the wrapped policy offers (an extended policy's helpers).
        if name == "wrapped":
            raise AttributeError(name)
        return getattr(self.wrapped, name)

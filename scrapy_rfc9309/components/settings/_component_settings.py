"""What the settings of other components mean for ours: the HTTP cache, the page middleware.

Whether Scrapy's HTTP cache honours noarchive (our policy wraps the configured
one), which policy ours wraps, whether a response's own signals are read
after download (our spider middleware enabled), and whether Scrapy's download
slots may space requests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._setting_values import SettingError, read_bool

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "httpcache_honours_noarchive",
    "meta_obey_on",
    "page_delays_possible",
    "page_signals_read",
    "wrapped_cache_policy",
]


def httpcache_honours_noarchive(settings: BaseSettings) -> bool:
    """Whether Scrapy's HTTP cache is on and wrapped by ``RobotsMetaCachePolicy``
    (which the add-on installs), so that noarchive pages are never stored."""
    policy = settings.get("HTTPCACHE_POLICY")
    name = policy if isinstance(policy, str) else f"{policy.__module__}.{policy.__qualname__}"
    return settings.getbool("HTTPCACHE_ENABLED") and name in (
        "scrapy_rfc9309.RobotsMetaCachePolicy",
        "scrapy_rfc9309.components.pages._cache_policy.RobotsMetaCachePolicy",
    )


_META_MIDDLEWARE = "scrapy_rfc9309.components.pages._meta_middleware.RobotsMetaMiddleware"


def page_signals_read(settings: BaseSettings) -> bool:
    """Whether a response's usage signals are read after download: ``ROBOTS_META_OBEY``
    on and ``RobotsMetaMiddleware`` (or a subclass) in ``SPIDER_MIDDLEWARES``, as
    the add-on enables it. Only then can a page supersede a tdmrep.json reservation.
    (``scrapy robotstxt`` reads its settings with the add-on applied, as a crawl
    has them: :func:`~scrapy_rfc9309.components._addon.settings_as_crawled`.)"""
    if not meta_obey_on(settings):
        return False
    from scrapy.utils.conf import build_component_list
    from scrapy.utils.misc import load_object

    for item in build_component_list(settings.getwithbase("SPIDER_MIDDLEWARES")):
        try:
            component = load_object(item) if isinstance(item, str) else item
        except (ImportError, NameError, ValueError, AttributeError):
            continue  # Scrapy reports a middleware it cannot load
        # By its class's path (it or a base class), as the middleware's
        # module imports this one.
        if isinstance(component, type) and any(
            f"{base.__module__}.{base.__qualname__}" == _META_MIDDLEWARE
            for base in component.__mro__
        ):
            return True
    return False


def wrapped_cache_policy(settings: BaseSettings, default: str) -> Any:
    """The class ``ROBOTS_META_HTTPCACHE_POLICY`` names (``default`` when unset).

    A name that cannot be loaded stops the crawl at start-up naming the
    setting, not with a bare ``ModuleNotFoundError``.
    """
    from scrapy.utils.misc import load_object

    value = settings.get("ROBOTS_META_HTTPCACHE_POLICY") or default
    try:
        return load_object(value)
    except (ImportError, AttributeError, NameError, TypeError, ValueError) as error:
        raise SettingError(
            f"ROBOTS_META_HTTPCACHE_POLICY must name an HTTP cache policy class "
            f"(such as 'scrapy.extensions.httpcache.RFC2616Policy'), got {value!r}: "
            f"{type(error).__name__}: {error}"
        ) from None


def meta_obey_on(settings: BaseSettings) -> bool:
    """``ROBOTS_META_OBEY``; unset (or ``None``): the value of ``ROBOTSTXT_OBEY``."""
    if settings.get("ROBOTS_META_OBEY") is None:
        return read_bool(settings, "ROBOTSTXT_OBEY")
    return read_bool(settings, "ROBOTS_META_OBEY")


def page_delays_possible(settings: BaseSettings, spider: Any = None) -> bool:
    """Whether a download slot may space its requests for a reason of Scrapy's
    own: ``DOWNLOAD_DELAY`` (or the spider's ``download_delay``), AutoThrottle,
    or a ``DOWNLOAD_SLOTS`` delay. When not, only a site's Crawl-delay spaces
    it, and the scheduler queue need not look up each request's slot (a parse
    of its URL)."""
    try:
        if (
            settings.getfloat("DOWNLOAD_DELAY") > 0
            or float(getattr(spider, "download_delay", 0) or 0) > 0
            or settings.getbool("AUTOTHROTTLE_ENABLED")
        ):
            return True
        slots = settings.getdict("DOWNLOAD_SLOTS")
    except (TypeError, ValueError):
        return True  # Scrapy's own settings: Scrapy reports them; assume spacing
    return any(not isinstance(slot, dict) or slot.get("delay", 0) != 0 for slot in slots.values())

"""Which of our components, and of Scrapy's, a crawl's settings enable.

Read from the settings alone, for the add-on, the middleware, the site service
and ``scrapy robotstxt``: the names of our components, whether the add-on is
enabled, which robots.txt middleware a project's crawl runs, and the refusal
of Scrapy's own robots.txt middleware beside ours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

from .settings._setting_values import SettingError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = [
    "OBEYS_BUILTIN",
    "OBEYS_NONE",
    "OBEYS_OURS",
    "addon_enabled",
    "crawl_obeys",
    "is_scrapy_redis_scheduler",
    "refuse_builtin_middleware",
]

#: Our add-on's class, by its path.
ADDON_CLASS = "scrapy_rfc9309.components._addon.Addon"
#: Scrapy's own robots.txt middleware, which ours replaces.
BUILTIN_MIDDLEWARE = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"

OUR_MIDDLEWARE = "scrapy_rfc9309.RobotsTxtMiddleware"
OUR_EXTENSION = "scrapy_rfc9309.RobotsTxtExtension"
OUR_SPIDER_MIDDLEWARE = "scrapy_rfc9309.RobotsMetaMiddleware"
#: Above Scrapy's own spider middlewares (the highest is 900): the first to see
#: a callback's output, so dropped requests never reach the depth or offsite ones.
SPIDER_MIDDLEWARE_PRIORITY = 950
OUR_CACHE_POLICY = "scrapy_rfc9309.RobotsMetaCachePolicy"
OUR_QUEUE = "scrapy_rfc9309.RobotsTxtPriorityQueue"
#: scrapy-redis's scheduler, and our queue for it (requests of pending sites wait in Redis)
SCRAPY_REDIS_SCHEDULER = "scrapy_redis.scheduler.Scheduler"
OUR_REDIS_QUEUE = "scrapy_rfc9309.RobotsTxtRedisQueue"
MIDDLEWARE_PRIORITY = 100
#: Last, after every built-in one (HttpCache 900): a site's turn in the cluster
#: is taken as close to the send as a middleware can be.
OUR_PACING_MIDDLEWARE = "scrapy_rfc9309.ClusterDelayMiddleware"
PACING_MIDDLEWARE_PRIORITY = 10_000
EXTENSION_PRIORITY = 100


def is_scrapy_redis_scheduler(scheduler: object) -> bool:
    """Whether a ``SCHEDULER`` value (a path or the class) is scrapy-redis's."""
    name = scheduler if isinstance(scheduler, str) else getattr(scheduler, "__qualname__", "")
    return name == SCRAPY_REDIS_SCHEDULER or (
        getattr(scheduler, "__module__", "") == "scrapy_redis.scheduler" and name == "Scheduler"
    )


def refuse_builtin_middleware(crawler: Crawler) -> None:
    """Stop the crawl if Scrapy's own robots.txt middleware is enabled too."""
    from scrapy.utils.conf import build_component_list

    enabled = build_component_list(crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES"))
    names = {
        item if isinstance(item, str) else f"{item.__module__}.{item.__qualname__}"
        for item in enabled
    }
    if BUILTIN_MIDDLEWARE not in names:
        return
    if addon_enabled(crawler.settings):
        # the add-on turns the built-in one off: this entry is the user's own
        raise SettingError(
            "scrapy_rfc9309.Addon replaces Scrapy's built-in robots.txt middleware, and "
            "both are enabled: DOWNLOADER_MIDDLEWARES enables it again "
            f"({BUILTIN_MIDDLEWARE}, in settings.py or in the spider's custom_settings); "
            "remove that entry, or set it to None"
        )
    raise SettingError(
        "scrapy_rfc9309.RobotsTxtMiddleware replaces Scrapy's built-in robots.txt "
        "middleware, and both are enabled. Disable the built-in one in settings.py "
        "(and in the spider's custom_settings):\n"
        f'    DOWNLOADER_MIDDLEWARES = {{"{BUILTIN_MIDDLEWARE}": None, '
        '"scrapy_rfc9309.RobotsTxtMiddleware": 100}\n'
        'or enable the add-on, ADDONS = {"scrapy_rfc9309.Addon": 100}, and leave the '
        "built-in one out of DOWNLOADER_MIDDLEWARES"
    )


#: :func:`crawl_obeys`' answers.
OBEYS_OURS, OBEYS_BUILTIN, OBEYS_NONE = "scrapy_rfc9309", "scrapy_builtin", "none"


def crawl_obeys(settings: BaseSettings) -> str:
    """Which robots.txt middleware a crawl with these (project) settings runs:
    :data:`OBEYS_OURS` (the add-on, or our middleware by hand),
    :data:`OBEYS_BUILTIN` (Scrapy's own, with ``ROBOTSTXT_OBEY`` on and neither),
    or :data:`OBEYS_NONE` (``ROBOTSTXT_OBEY`` off)."""
    addon = addon_enabled(settings)
    obey = settings.getbool("ROBOTSTXT_OBEY")
    if addon and (settings.getpriority("ROBOTSTXT_OBEY") or 0) <= SETTINGS_PRIORITIES["addon"]:
        obey = True  # the add-on's own value, below the project's
    if not obey:
        return OBEYS_NONE
    ours = settings.getdict("DOWNLOADER_MIDDLEWARES").get(OUR_MIDDLEWARE) is not None
    return OBEYS_OURS if addon or ours else OBEYS_BUILTIN


def addon_enabled(settings: BaseSettings) -> bool:
    """Whether ``ADDONS`` enables our add-on (``scrapy_rfc9309.Addon``, or a subclass)."""
    return any(_is_our_addon(addon) for addon in settings.getdict("ADDONS"))


def _is_our_addon(addon: object) -> bool:
    """Whether an ``ADDONS`` key (a path or the class) names our add-on."""
    if isinstance(addon, str):
        return addon in ("scrapy_rfc9309.Addon", "scrapy_rfc9309.components.Addon") or (
            addon.startswith("scrapy_rfc9309.") and addon.endswith(".Addon")
        )
    # by its class's path (it or a base class): the add-on's module imports this one
    return isinstance(addon, type) and any(
        f"{base.__module__}.{base.__qualname__}" == ADDON_CLASS for base in addon.__mro__
    )

"""``Addon``: enable scrapy-rfc9309 with one line, ``ADDONS = {"scrapy_rfc9309.Addon": 100}``.

The components it enables and where, and Scrapy's own robots.txt middleware,
which it turns off: :func:`refuse_builtin_middleware` stops a crawl that has
both on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.settings import SETTINGS_PRIORITIES

from ._settings import SettingError, warn_unknown_settings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

__all__ = ["Addon", "addon_enabled", "crawl_obeys", "refuse_builtin_middleware"]

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


class Addon:
    """Scrapy add-on: replaces the built-in robots.txt middleware with ours.

    * turns Scrapy's ``RobotsTxtMiddleware`` off (it is only listed in
      ``DOWNLOADER_MIDDLEWARES_BASE``, so it is set to ``None``); enabled in
      ``DOWNLOADER_MIDDLEWARES`` too, it is left on and the crawl stops at
      start-up saying both are enabled;
    * installs :class:`~scrapy_rfc9309.RobotsTxtMiddleware` at 100 and
      :class:`~scrapy_rfc9309.RobotsTxtExtension`;
    * sets ``ROBOTSTXT_OBEY = True`` at add-on priority, so a value in the
      project's settings still wins;
    * enables :class:`~scrapy_rfc9309.RobotsMetaMiddleware` (page-level
      directives; on when ``ROBOTS_META_OBEY``, by default ``ROBOTSTXT_OBEY``)
      and wraps the configured ``HTTPCACHE_POLICY`` in
      :class:`~scrapy_rfc9309.RobotsMetaCachePolicy` (noarchive).
    * sets ``SCHEDULER_PRIORITY_QUEUE`` to
      :class:`~scrapy_rfc9309.RobotsTxtPriorityQueue` at add-on priority
      (requests wait for robots.txt in the scheduler); a queue set in the
      project's settings still wins; with scrapy-redis's ``SCHEDULER``, sets
      ``SCHEDULER_QUEUE_CLASS`` to ``RobotsTxtRedisQueue`` likewise (requests
      of pending sites wait in Redis).
    """

    def update_settings(self, settings: BaseSettings) -> None:
        warn_unknown_settings(settings)  # a misspelt name is otherwise ignored silently
        settings.set("ROBOTSTXT_OBEY", True, "addon")
        # enabled in DOWNLOADER_MIDDLEWARES (settings.py or a spider's custom_settings,
        # read before add-ons): left on, so that the crawl stops saying both are enabled
        if settings.getdict("DOWNLOADER_MIDDLEWARES").get(BUILTIN_MIDDLEWARE) is None:
            _set_component(settings, "DOWNLOADER_MIDDLEWARES", BUILTIN_MIDDLEWARE, None)
        _set_component(settings, "DOWNLOADER_MIDDLEWARES", OUR_MIDDLEWARE, MIDDLEWARE_PRIORITY)
        _set_component(
            settings, "DOWNLOADER_MIDDLEWARES", OUR_PACING_MIDDLEWARE, PACING_MIDDLEWARE_PRIORITY
        )
        _set_component(settings, "EXTENSIONS", OUR_EXTENSION, EXTENSION_PRIORITY)
        _set_component(
            settings, "SPIDER_MIDDLEWARES", OUR_SPIDER_MIDDLEWARE, SPIDER_MIDDLEWARE_PRIORITY
        )
        _wrap_cache_policy(settings)
        settings.set("SCHEDULER_PRIORITY_QUEUE", OUR_QUEUE, "addon")
        if is_scrapy_redis_scheduler(settings.get("SCHEDULER")):
            settings.set("SCHEDULER_QUEUE_CLASS", OUR_REDIS_QUEUE, "addon")


def is_scrapy_redis_scheduler(scheduler: object) -> bool:
    """Whether a ``SCHEDULER`` value (a path or the class) is scrapy-redis's."""
    name = scheduler if isinstance(scheduler, str) else getattr(scheduler, "__qualname__", "")
    return name == SCRAPY_REDIS_SCHEDULER or (
        getattr(scheduler, "__module__", "") == "scrapy_redis.scheduler" and name == "Scheduler"
    )


def _set_component(settings: BaseSettings, name: str, path: str, priority: int | None) -> None:
    """Set ``path`` in a component priority dict, keeping the setting's priority.

    Keys are import paths, as in ``*_BASE``: a class key would not override
    the built-in middleware's string key there, and both would load.
    """
    components = settings.getdict(name)
    components[path] = priority
    settings.set(name, components, settings.getpriority(name) or 0)


def _wrap_cache_policy(settings: BaseSettings) -> None:
    """Install our HTTP cache policy around the configured one, at its priority."""
    from ._cache_policy import RobotsMetaCachePolicy

    current = settings.get("HTTPCACHE_POLICY")
    if current in (OUR_CACHE_POLICY, RobotsMetaCachePolicy):
        return
    priority = settings.getpriority("HTTPCACHE_POLICY") or 0
    settings.set("ROBOTS_META_HTTPCACHE_POLICY", current, priority)
    settings.set("HTTPCACHE_POLICY", OUR_CACHE_POLICY, priority)


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
    """Whether ``ADDONS`` enables our add-on."""
    return any(_is_our_addon(addon) for addon in settings.getdict("ADDONS"))


def _is_our_addon(addon: object) -> bool:
    """Whether an ``ADDONS`` key (a path or the class) names our add-on."""
    if isinstance(addon, str):
        return addon in ("scrapy_rfc9309.Addon", "scrapy_rfc9309.components.Addon") or (
            addon.startswith("scrapy_rfc9309.") and addon.endswith(".Addon")
        )
    return isinstance(addon, type) and issubclass(addon, Addon)

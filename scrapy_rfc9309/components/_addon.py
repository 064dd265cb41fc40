"""``Addon``: enable scrapy-rfc9309 with one line, ``ADDONS = {"scrapy_rfc9309.Addon": 100}``.

The components it enables and where, and Scrapy's own robots.txt middleware,
which it turns off (:func:`~._enabled.refuse_builtin_middleware` stops a crawl
that has both on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._enabled import (
    BUILTIN_MIDDLEWARE,
    EXTENSION_PRIORITY,
    MIDDLEWARE_PRIORITY,
    OUR_CACHE_POLICY,
    OUR_EXTENSION,
    OUR_MIDDLEWARE,
    OUR_PACING_MIDDLEWARE,
    OUR_QUEUE,
    OUR_REDIS_QUEUE,
    OUR_SPIDER_MIDDLEWARE,
    PACING_MIDDLEWARE_PRIORITY,
    SPIDER_MIDDLEWARE_PRIORITY,
    is_scrapy_redis_scheduler,
)
from .settings._setting_names import warn_unknown_settings

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["Addon"]


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
        apply_addon(settings)


def settings_as_crawled(settings: BaseSettings) -> BaseSettings:
    """``settings`` as a crawl of the project reads them: with our add-on applied
    when ``ADDONS`` names it (``scrapy robotstxt`` reads the project's settings,
    to which Scrapy applies add-ons only in a crawler). A copy; no warning."""
    from ._enabled import addon_enabled

    if not addon_enabled(settings):
        return settings
    crawled = settings.copy()
    apply_addon(crawled)
    return crawled


def apply_addon(settings: BaseSettings) -> None:
    """What the add-on sets (see :class:`Addon`)."""
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
    from .pages._cache_policy import RobotsMetaCachePolicy

    current = settings.get("HTTPCACHE_POLICY")
    if current in (OUR_CACHE_POLICY, RobotsMetaCachePolicy):
        return
    priority = settings.getpriority("HTTPCACHE_POLICY") or 0
    settings.set("ROBOTS_META_HTTPCACHE_POLICY", current, priority)
    settings.set("HTTPCACHE_POLICY", OUR_CACHE_POLICY, priority)

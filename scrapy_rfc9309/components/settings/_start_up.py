"""Starting a component: robots.txt obeyed or the crawl stopped, and the reason said once.

A setting that stops the crawl is logged as one ERROR line before Scrapy's
traceback (:func:`start_up_errors_logged`), and a ``NotConfigured`` raised
while one of our components starts stops the crawl instead of disabling the
component (:func:`never_disabled`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from scrapy.exceptions import NotConfigured

from ._setting_values import SettingError

__all__ = ["never_disabled", "start_up_errors_logged"]

logger = logging.getLogger("scrapy_rfc9309.settings")


@contextmanager
def start_up_errors_logged() -> Iterator[None]:
    """Log a :class:`SettingError` raised while a component starts as one ERROR
    line, before Scrapy's traceback buries it at the end of 30 lines; once, however
    many components it passes through."""
    try:
        yield
    except SettingError as error:
        if not error.logged:
            error.logged = True
            logger.error("The crawl cannot start: %s", error)
        raise


@contextmanager
def never_disabled(component: str) -> Iterator[None]:
    """Start ``component`` with robots.txt obeyed: a ``NotConfigured`` raised
    while it starts (by Scrapy's own utilities, or code they call) stops the
    crawl as a :class:`SettingError` naming the component.

    Scrapy disables a component whose ``from_crawler`` raises ``NotConfigured``
    with one WARNING and crawls on; the add-on has already turned Scrapy's own
    robots.txt middleware off, so robots.txt would not be obeyed at all. A
    component that is off on purpose (``ROBOTSTXT_OBEY = False``) raises its
    ``NotConfigured`` outside this block.
    """
    try:
        yield
    except NotConfigured as exc:
        reason = str(exc) or "NotConfigured"
        raise SettingError(
            f"{component} cannot start ({reason}); the crawl is stopped rather than run "
            "without obeying robots.txt"
        ) from exc

"""``scrapy robotstxt``'s options and the project it runs in, checked.

``--agent`` and ``--purpose`` are read as the settings they stand for are
(``ROBOTSTXT_USER_AGENT``, ``ROBOTSTXT_PURPOSES``); a project whose crawl
would not obey these answers is said so; the configured reactor is installed
before the command's crawls start.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import UsageError
from scrapy.utils.reactor import install_reactor, is_reactor_installed

from ...parser._usage import CATEGORIES, PURPOSE_ALIASES, RETIRED_PURPOSES
from ..settings._agent_settings import aliased_purpose, reduce_agent_setting
from ..settings._setting_values import SettingError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = [
    "check_agent",
    "check_purposes",
    "install_configured_reactor",
    "warn_if_the_crawl_obeys_another",
]


def check_agent(value: str, warnings: list[str] | None = None) -> str:
    """The product token ``--agent`` names, reduced as ``ROBOTSTXT_USER_AGENT`` is
    (``MyBot/1.0`` obeys as ``MyBot``, a warning added to ``warnings``);
    ``UsageError`` if it names none."""
    if value.strip() == "*":
        return "*"
    try:
        return reduce_agent_setting(value, "--agent", warnings)
    except SettingError as error:
        raise UsageError(str(error)) from None


def install_configured_reactor(settings: BaseSettings) -> None:
    """Install the reactor ``TWISTED_REACTOR`` names unless one is installed already.

    The command's crawls start once the reactor runs, so the first reactor the
    process touches must be the configured one: Scrapy 2.13's ``CrawlerProcess``
    installs it only with the first crawler, and importing
    ``twisted.internet.reactor`` before would install the platform's default
    (which that crawler then refuses). A reactor already installed is left as
    it is (the crawler reports one that does not match, as ``scrapy crawl`` does).
    """
    if is_reactor_installed():
        return
    if settings.get("TWISTED_REACTOR"):
        install_reactor(settings["TWISTED_REACTOR"], settings.get("ASYNCIO_EVENT_LOOP"))


def warn_if_the_crawl_obeys_another(settings: Any) -> str | None:
    """In a project whose crawl would not run our middleware (no add-on, Scrapy's
    built-in one in its place, or ``ROBOTSTXT_OBEY`` off), say that these answers
    are not what its crawl obeys: one line on standard error. Which middleware
    its crawl runs (``crawl_obeys``); ``None`` outside a project."""
    from scrapy.utils.project import inside_project

    from .._enabled import OBEYS_BUILTIN, OBEYS_OURS, crawl_obeys

    if not inside_project():
        return None
    obeys = crawl_obeys(settings)
    if obeys == OBEYS_OURS:
        return obeys
    if obeys == OBEYS_BUILTIN:
        why = "obeys Scrapy's built-in RobotsTxtMiddleware, not these answers"
    else:
        why = "does not obey robots.txt at all (ROBOTSTXT_OBEY is off)"
    print(
        f"warning:     a crawl of this project {why}; enable the add-on in settings.py: "
        'ADDONS = {"scrapy_rfc9309.Addon": 100}',
        file=sys.stderr,
    )
    return obeys


def check_purposes(values: list[str], warnings: list[str]) -> tuple[str, ...]:
    """``--purpose`` values (each may be comma-separated), checked as
    ``ROBOTSTXT_PURPOSES`` is; ``UsageError`` naming the known ones."""
    purposes: list[str] = []
    for value in values:
        for name in value.split(","):
            name = name.strip().lower()
            if not name:
                continue
            if name in PURPOSE_ALIASES:
                name = aliased_purpose("--purpose", name, warnings)
            if name in RETIRED_PURPOSES:
                raise UsageError(
                    f"--purpose: {name!r} is no longer a usage category: {RETIRED_PURPOSES[name]}"
                )
            if name not in CATEGORIES:
                known = ", ".join(sorted(CATEGORIES))
                raise UsageError(f"--purpose: unknown purpose {name!r}; known: {known}")
            if name not in purposes:
                purposes.append(name)
    if not purposes:
        known = ", ".join(sorted(CATEGORIES))
        raise UsageError(f"--purpose: no purpose named; known: {known}")
    return tuple(purposes)

"""All settings of scrapy-rfc9309, read and checked in one place.

Invalid values stop the crawl at start-up with a message naming the setting.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._agent import derive_product_token, is_valid_token
from ._lines import DEFAULT_MAX_SIZE
from ._rulekey import MAX_BODY_SIZE

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["DEFAULT_CACHE_MAX_SITES", "RobotsTxtSettings"]

logger = logging.getLogger("scrapy_rfc9309.settings")

#: RFC 9309 2.5: the parsing limit MUST be at least 500 KiB (512,000 bytes).
RFC_MIN_SIZE = 500 * 1024
DEFAULT_CACHE_MAX_SITES = 10_000
DEFAULT_CACHE_TTL = 86_400
DEFAULT_UNREACHABLE_TTL = 600
DEFAULT_CRAWL_DELAY_MAX = 60.0


class SettingError(ValueError):
    """A scrapy-rfc9309 setting has a value it cannot work with."""


def _number(settings: BaseSettings, name: str, default: float, *, integer: bool) -> Any:
    raw = settings.get(name, default)
    if raw is None:
        return default
    try:
        value = int(raw) if integer else float(raw)
    except (TypeError, ValueError):
        kind = "an integer" if integer else "a number"
        raise SettingError(f"{name} must be {kind}, got {raw!r}") from None
    if isinstance(raw, bool) or not 0 <= value < float("inf"):
        raise SettingError(f"{name} must be a non-negative number, got {raw!r}")
    return value


def _meta_obey(settings: BaseSettings) -> bool:
    """``ROBOTS_META_OBEY``; unset (or ``None``): the value of ``ROBOTSTXT_OBEY``."""
    if settings.get("ROBOTS_META_OBEY") is None:
        return settings.getbool("ROBOTSTXT_OBEY")
    try:
        return settings.getbool("ROBOTS_META_OBEY")
    except ValueError:
        raise SettingError(
            f"ROBOTS_META_OBEY must be True or False, got {settings.get('ROBOTS_META_OBEY')!r}"
        ) from None


META_NOINDEX_CHOICES = ("drop", "keep")


def _meta_noindex(settings: BaseSettings) -> str:
    """``ROBOTS_META_NOINDEX``: ``"drop"`` (default) or ``"keep"``."""
    raw = settings.get("ROBOTS_META_NOINDEX")
    if raw is None:
        return "drop"
    value = str(raw).strip().lower()
    if value not in META_NOINDEX_CHOICES:
        raise SettingError(f'ROBOTS_META_NOINDEX must be "drop" or "keep", got {raw!r}')
    return value


@dataclass(frozen=True)
class RobotsTxtSettings:
    """The settings of DESIGN.md section 3, validated."""

    obey: bool
    user_agent_token: str | None
    default_user_agent: str
    max_size: int
    cache_ttl: float
    unreachable_ttl: float
    cache_max_sites: int
    crawl_delay: bool
    crawl_delay_max: float
    #: ``ROBOTS_META_OBEY``: obey page-level directives (default: ``obey``).
    meta_obey: bool = False
    #: ``ROBOTS_META_NOINDEX``: ``"drop"`` or ``"keep"`` items of noindex pages.
    meta_noindex: str = "drop"

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RobotsTxtSettings:
        token = settings.get("ROBOTSTXT_USER_AGENT")
        if token is not None:
            token = str(token).strip()
            if not is_valid_token(token):
                raise SettingError(
                    f"ROBOTSTXT_USER_AGENT must be a product token of letters, '_' and '-' "
                    f"(RFC 9309 2.2.1), got {settings.get('ROBOTSTXT_USER_AGENT')!r}"
                )
        max_size = _number(settings, "ROBOTSTXT_MAX_SIZE", DEFAULT_MAX_SIZE, integer=True)
        if max_size >= MAX_BODY_SIZE:
            raise SettingError(f"ROBOTSTXT_MAX_SIZE must be below 2 GiB, got {max_size}")
        cache_max_sites = _number(
            settings, "ROBOTSTXT_CACHE_MAX_SITES", DEFAULT_CACHE_MAX_SITES, integer=True
        )
        if cache_max_sites < 1:
            raise SettingError("ROBOTSTXT_CACHE_MAX_SITES must be at least 1")
        return cls(
            obey=settings.getbool("ROBOTSTXT_OBEY"),
            user_agent_token=token or None,
            default_user_agent=str(settings.get("USER_AGENT") or ""),
            max_size=max_size,
            cache_ttl=_number(settings, "ROBOTSTXT_CACHE_TTL", DEFAULT_CACHE_TTL, integer=False),
            unreachable_ttl=_number(
                settings, "ROBOTSTXT_UNREACHABLE_TTL", DEFAULT_UNREACHABLE_TTL, integer=False
            ),
            cache_max_sites=cache_max_sites,
            crawl_delay=settings.getbool("ROBOTSTXT_CRAWL_DELAY"),
            crawl_delay_max=_number(
                settings, "ROBOTSTXT_CRAWL_DELAY_MAX", DEFAULT_CRAWL_DELAY_MAX, integer=False
            ),
            meta_obey=_meta_obey(settings),
            meta_noindex=_meta_noindex(settings),
        )

    def token_for(self, user_agent: str | None) -> str:
        """The product token to obey as for a request with this User-Agent."""
        if self.user_agent_token:
            return self.user_agent_token
        return derive_product_token(user_agent or self.default_user_agent) or "*"

    def token_for_header(self, header: bytes | None) -> str:
        """:meth:`token_for` a request's raw ``User-Agent`` header value."""
        return self.token_for(header.decode("latin-1") if header else None)

    def describe_token(self) -> str:
        """Which token is obeyed and where it comes from, for the start-up log."""
        if self.user_agent_token:
            return f"{self.user_agent_token!r} (ROBOTSTXT_USER_AGENT)"
        token = self.token_for(None)
        return (
            f"{token!r} (derived from USER_AGENT {self.default_user_agent!r}; "
            "requests with their own User-Agent header obey as that header's product)"
        )

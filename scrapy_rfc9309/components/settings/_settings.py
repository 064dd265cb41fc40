"""The crawl's robots.txt settings (``RobotsTxtSettings``), read and checked once, at start-up.

Invalid values stop the crawl at start-up with a message naming the setting.
Reading is pure: a value used other than as written is a warning kept on the
result (:attr:`RobotsTxtSettings.warnings`), logged once by whoever reads the
settings for a crawler (:func:`~._crawler_settings.robotstxt_settings`) or
for a run of ``scrapy robotstxt``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...parser._agent import derive_product_token
from ...parser._lines import DEFAULT_MAX_SIZE
from ...parser._rulekey import MAX_BODY_SIZE
from ...sites._request_decision import DecisionPolicy
from ._agent_settings import read_also_obey, read_purposes, reduce_agent_setting
from ._component_settings import meta_obey_on, page_signals_read, wrapped_cache_policy
from ._report_settings import default_user_agent
from ._setting_values import (
    SettingError,
    read_bool,
    read_delay_bound,
    read_number,
)

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.settings import BaseSettings

__all__ = [
    "DEFAULT_CACHE_MAX_SITES",
    "RobotsTxtSettings",
    "max_size_setting",
]

#: RFC 9309 2.5: the parsing limit MUST be at least 500 KiB (512,000 bytes).
RFC_MIN_SIZE = 500 * 1024
#: ``ROBOTSTXT_MAX_SIZE`` below this is refused at start-up: 0 would ignore
#: every robots.txt, and a few hundred bytes hardly hold one group (sizes
#: from here to :data:`RFC_MIN_SIZE` are accepted with a WARNING).
MIN_MAX_SIZE = 1024
#: ``ROBOTSTXT_CACHE_TTL`` and ``ROBOTSTXT_UNREACHABLE_TTL`` below this are
#: raised to it, with a WARNING: a robots.txt kept 0 seconds would be
#: downloaded again for every request.
MIN_TTL = 1.0
#: RFC 9309 2.4: a cached robots.txt SHOULD NOT be used for more than 24 hours.
RFC_MAX_CACHE_TTL = 86_400
DEFAULT_CACHE_MAX_SITES = 10_000
#: User-Agent header values whose product token is remembered.
TOKEN_CACHE_SIZE = 256
DEFAULT_CACHE_TTL = 86_400
DEFAULT_UNREACHABLE_TTL = 600
#: A robots.txt that asks not to be cached (``max-age=0``, ``no-cache``) is
#: still used this long, so that it is not downloaded once per request.
DEFAULT_CACHE_MIN_TTL = 600
DEFAULT_CRAWL_DELAY_MAX = 60.0
#: Upper bound on an honoured ``Retry-After`` of a 429 / 503 robots.txt.
DEFAULT_RETRY_AFTER_MAX = 3600.0
#: Seconds requests of a site whose robots.txt is unreachable wait for it.
DEFAULT_UNREACHABLE_DEFER = 300.0
#: Share of ``CONCURRENT_REQUESTS`` that requests held in the middleware may
#: take (with a scheduler queue that is not ours).
DEFAULT_HELD_SHARE = 0.5
#: robots.txt downloads in flight at most (they do not take the pages'
#: ``CONCURRENT_REQUESTS``).
DEFAULT_CONCURRENT_DOWNLOADS = 64
DEFAULT_DOWNLOAD_TIMEOUT = 10.0
#: Scrapy's ``DOWNLOAD_TIMEOUT`` default.
DEFAULT_PAGE_DOWNLOAD_TIMEOUT = 180.0


def _ttl(settings: BaseSettings, name: str, default: float, warnings: list[str]) -> float:
    """A lifetime setting in seconds: below :data:`MIN_TTL` raised to it, and
    ``ROBOTSTXT_CACHE_TTL`` over 24 hours kept; each with a warning naming it."""
    value = float(read_number(settings, name, default, integer=False))
    if value < MIN_TTL:
        warnings.append(
            f"{name} is {value:g} s: raised to {MIN_TTL:g} s (a robots.txt kept less "
            "would be downloaded again for every request)"
        )
    elif name == "ROBOTSTXT_CACHE_TTL" and value > RFC_MAX_CACHE_TTL:
        warnings.append(
            f"{name} is {value:g} s: robots.txt files are kept longer than the 24 hours "
            "RFC 9309 2.4 allows (SHOULD NOT be used for more than 24 hours)"
        )
    return max(value, MIN_TTL)


def crawl_delay_on(settings: BaseSettings) -> bool:
    """``ROBOTSTXT_CRAWL_DELAY``: on unless turned off (Nutch and StormCrawler
    honour Crawl-delay by default too, with a cap: ``ROBOTSTXT_CRAWL_DELAY_MAX``)."""
    return read_bool(settings, "ROBOTSTXT_CRAWL_DELAY", default=True)


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


def max_size_setting(settings: BaseSettings) -> int:
    """``ROBOTSTXT_MAX_SIZE``: octets of a robots.txt read (RFC 9309 2.5), a
    whole number from :data:`MIN_MAX_SIZE` to below 2 GiB; read so by the
    add-on and by :class:`~._robotparser.RFC9309RobotParser` alike."""
    # any number here: the lower bound is said below, with its reason
    max_size = read_number(
        settings, "ROBOTSTXT_MAX_SIZE", DEFAULT_MAX_SIZE, integer=True, minimum=-float("inf")
    )
    if max_size >= MAX_BODY_SIZE:
        raise SettingError(
            f"ROBOTSTXT_MAX_SIZE must be below 2 GiB, got {settings.get('ROBOTSTXT_MAX_SIZE')!r}"
        )
    if max_size < MIN_MAX_SIZE:
        raise SettingError(
            f"ROBOTSTXT_MAX_SIZE must be at least {MIN_MAX_SIZE} bytes (RFC 9309 2.5 asks "
            f"for at least {RFC_MIN_SIZE}), got {settings.get('ROBOTSTXT_MAX_SIZE')!r}"
        )
    return int(max_size)


@dataclass(frozen=True)
class RobotsTxtSettings:
    """The robots.txt settings, read and validated once, at start-up."""

    obey: bool
    user_agent_token: str | None
    default_user_agent: str
    max_size: int
    cache_ttl: float
    unreachable_ttl: float
    cache_max_sites: int
    crawl_delay: bool
    crawl_delay_max: float
    #: 401 and 403 robots.txt disallow the whole site (HTTP: The Definitive
    #: Guide ch. 9) instead of allowing it (RFC 9309 2.3.1.3).
    auth_disallow: bool = False
    #: Upper bound in seconds on an honoured ``Retry-After``.
    retry_after_max: float = DEFAULT_RETRY_AFTER_MAX
    #: Floor in seconds on a lifetime set by ``Cache-Control`` / ``Expires``
    #: (never above ``cache_ttl``).
    cache_min_ttl: float = DEFAULT_CACHE_MIN_TTL
    #: ``ROBOTS_META_OBEY``: obey page-level directives (default: ``obey``).
    meta_obey: bool = False
    #: ``ROBOTS_META_NOINDEX``: ``"drop"`` or ``"keep"`` items of noindex pages.
    meta_noindex: str = "drop"
    #: Seconds requests of an unreachable site wait in the scheduler queue
    #: for its robots.txt (HTTP: The Definitive Guide ch. 9); 0: dropped at once.
    unreachable_defer: float = DEFAULT_UNREACHABLE_DEFER
    #: robots.txt downloads in flight at most.
    concurrent_downloads: int = DEFAULT_CONCURRENT_DOWNLOADS
    #: ``ROBOTSTXT_DOWNLOAD_TIMEOUT``: seconds one robots.txt download may take
    #: (its ``download_timeout``); default: 10, or ``DOWNLOAD_TIMEOUT`` if smaller.
    download_timeout: float = DEFAULT_DOWNLOAD_TIMEOUT
    #: ``DOWNLOAD_TIMEOUT``: seconds a page (or a tdmrep.json) download may take;
    #: 0: no bound (Scrapy's own handlers may still apply one).
    page_download_timeout: float = DEFAULT_PAGE_DOWNLOAD_TIMEOUT
    #: ``ROBOTSTXT_PURPOSES``: declared uses (usage categories); empty: none declared.
    purposes: tuple[str, ...] = ()
    #: With a scheduler queue that is not ours: requests held in the middleware
    #: at most (``ROBOTSTXT_HELD_SHARE`` of ``CONCURRENT_REQUESTS``, rounded
    #: down, at least 1); the others are set aside until their site is settled. ``None``:
    #: no bound (``CONCURRENT_REQUESTS`` is 0, no limit).
    held_max: int | None = None
    #: requests a process of a scrapy-redis cluster keeps in memory, popped while
    #: their site is settled here: its ``CONCURRENT_REQUESTS`` (what it can
    #: download at once; the queue's ``PARK_MAX`` bounds it); the others wait in
    #: Redis for any process
    park_max: int = 16
    #: The scheduler keeps its queue across runs (``JOBDIR`` set, or
    #: scrapy-redis's ``SCHEDULER_PERSIST`` true): requests waiting for a
    #: robots.txt when the spider closes are put back in the scheduler.
    keeps_queue: bool = False
    #: ``ROBOTSTXT_ALSO_OBEY``: further product tokens; a URL is fetched only if
    #: each of their groups allows it too (empty: only the crawl's own token)
    also_obey: tuple[str, ...] = ()
    #: ``ROBOTS_META_NOAI``: ``noai`` / ``noimageai`` page directives refuse ``train-ai``
    meta_noai: bool = False
    #: the page's own usage signals are read after download (``ROBOTS_META_OBEY``
    #: and the meta middleware enabled): see :attr:`policy`
    page_decides: bool = False
    #: what the reading found used other than as written (a token reduced, a
    #: lifetime raised, a purpose alias), to be logged once by the reader
    warnings: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: User-Agent header value -> product token (:meth:`token_for_header`)
    _tokens: dict[bytes | None, str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> RobotsTxtSettings:
        """The settings read and checked (pure: nothing logged; the warnings
        are on the result)."""
        warnings: list[str] = []
        token = settings.get("ROBOTSTXT_USER_AGENT")
        if token is not None and not isinstance(token, str):
            raise SettingError(
                "ROBOTSTXT_USER_AGENT must be a string naming a product token such as "
                f"'ExampleBot' (RFC 9309 2.2.1), got {token!r}"
            )
        # Unset or empty (as Scrapy's own middleware reads it): derived from
        # the User-Agent; any other value must name a product token.
        token = reduce_agent_setting(token, "ROBOTSTXT_USER_AGENT", warnings) if token else None
        max_size = max_size_setting(settings)
        cache_max_sites = read_number(
            settings, "ROBOTSTXT_CACHE_MAX_SITES", DEFAULT_CACHE_MAX_SITES, integer=True
        )
        if cache_max_sites < 1:
            raise SettingError(
                "ROBOTSTXT_CACHE_MAX_SITES must be at least 1, "
                f"got {settings.get('ROBOTSTXT_CACHE_MAX_SITES')!r}"
            )
        if settings.get("ROBOTS_META_HTTPCACHE_POLICY"):
            # loaded only when HTTPCACHE_ENABLED: a bad name stops the crawl anyway
            wrapped_cache_policy(settings, "")
        return cls(
            obey=read_bool(settings, "ROBOTSTXT_OBEY"),
            user_agent_token=token or None,
            default_user_agent=default_user_agent(settings),
            max_size=max_size,
            cache_ttl=_ttl(settings, "ROBOTSTXT_CACHE_TTL", DEFAULT_CACHE_TTL, warnings),
            unreachable_ttl=_ttl(
                settings, "ROBOTSTXT_UNREACHABLE_TTL", DEFAULT_UNREACHABLE_TTL, warnings
            ),
            cache_max_sites=cache_max_sites,
            crawl_delay=crawl_delay_on(settings),
            crawl_delay_max=read_delay_bound(
                settings, "ROBOTSTXT_CRAWL_DELAY_MAX", DEFAULT_CRAWL_DELAY_MAX
            ),
            auth_disallow=read_bool(settings, "ROBOTSTXT_AUTH_DISALLOW"),
            retry_after_max=read_number(
                settings, "ROBOTSTXT_RETRY_AFTER_MAX", DEFAULT_RETRY_AFTER_MAX, integer=False
            ),
            cache_min_ttl=read_number(
                settings, "ROBOTSTXT_CACHE_MIN_TTL", DEFAULT_CACHE_MIN_TTL, integer=False
            ),
            meta_obey=meta_obey_on(settings),
            meta_noindex=_meta_noindex(settings),
            unreachable_defer=read_number(
                settings, "ROBOTSTXT_UNREACHABLE_DEFER", DEFAULT_UNREACHABLE_DEFER, integer=False
            ),
            **_concurrency(settings),
            purposes=read_purposes(settings, warnings),
            held_max=_held_max(settings),
            park_max=_park_max(settings),
            keeps_queue=_keeps_queue(settings),
            also_obey=read_also_obey(settings, warnings),
            meta_noai=read_bool(settings, "ROBOTS_META_NOAI"),
            page_decides=page_signals_read(settings),
            warnings=tuple(dict.fromkeys(warnings)),  # each said once
        )

    @property
    def policy(self) -> DecisionPolicy:
        """What these settings say about deciding each request
        (``ROBOTSTXT_ALSO_OBEY``, ``ROBOTSTXT_PURPOSES``, whether the page's own
        signals are read, ``ROBOTSTXT_CRAWL_DELAY_MAX``): one policy for the
        crawl and every form of ``scrapy robotstxt``."""
        return DecisionPolicy(
            also_obey=self.also_obey,
            purposes=self.purposes,
            page_decides=self.page_decides,
            crawl_delay_max=self.crawl_delay_max,
        )

    def token_for(self, user_agent: str | None) -> str:
        """The product token to obey as for a request with this User-Agent
        (``None``: the crawl's, remembered as :meth:`token_for_header` remembers)."""
        if self.user_agent_token:
            return self.user_agent_token
        if user_agent is None:  # asked at each robots.txt parsed
            return self.token_for_header(None)
        return _derived_token(user_agent, self.default_user_agent)

    def token_for_header(self, header: bytes | None) -> str:
        """:meth:`token_for` a request's raw ``User-Agent`` header value.

        The one derivation every component uses (the middleware, the meta
        middleware, the cache policy, the extension); the last
        :data:`TOKEN_CACHE_SIZE` header values are remembered.
        """
        if self.user_agent_token:
            return self.user_agent_token
        tokens = self._tokens
        token = tokens.get(header)
        if token is None:
            if len(tokens) >= TOKEN_CACHE_SIZE:
                tokens.clear()
            value = header.decode("latin-1") if header else ""
            token = tokens[header] = _derived_token(value, self.default_user_agent)
        return token

    def token_of(self, request: Request | None) -> str:
        """The product token ``request`` obeys as (RFC 9309 2.2.1): :meth:`token_for_header`
        of its ``User-Agent`` header; the crawl's for no request.

        Read from the header dictionary's own entry: Scrapy's ``Headers`` keep
        each name normalised (``User-Agent``) with a list of values, the last
        of which ``Headers.get`` returns; this skips normalising the name on
        every request (tests/test_settings_token.py checks the layout)."""
        if self.user_agent_token:
            return self.user_agent_token
        values = None if request is None else dict.get(request.headers, b"User-Agent")
        return self.token_for_header(values[-1] if values else None)

    def describe_token(self) -> str:
        """Which token is obeyed and where it comes from, for the start-up log."""
        also = (
            f", and also as {', '.join(map(repr, self.also_obey))} (ROBOTSTXT_ALSO_OBEY)"
            if self.also_obey
            else ""
        )
        if self.user_agent_token:
            return f"{self.user_agent_token!r} (ROBOTSTXT_USER_AGENT){also}"
        token = self.token_for(None)
        return (
            f"{token!r} (derived from USER_AGENT {self.default_user_agent!r}; "
            f"requests with their own User-Agent header obey as that header's product){also}"
        )


def _derived_token(user_agent: str, default_user_agent: str) -> str:
    """The product token of a User-Agent value (empty: the crawl's ``USER_AGENT``)."""
    return derive_product_token(user_agent or default_user_agent) or "*"


def _concurrency(settings: BaseSettings) -> dict[str, Any]:
    """``concurrent_downloads``, ``download_timeout`` and ``page_download_timeout``,
    from ``ROBOTSTXT_CONCURRENT_DOWNLOADS``, ``ROBOTSTXT_DOWNLOAD_TIMEOUT`` and
    ``DOWNLOAD_TIMEOUT``."""
    pages = read_number(settings, "DOWNLOAD_TIMEOUT", DEFAULT_PAGE_DOWNLOAD_TIMEOUT, integer=False)
    default = min(DEFAULT_DOWNLOAD_TIMEOUT, pages) if pages > 0 else DEFAULT_DOWNLOAD_TIMEOUT
    timeout = read_number(settings, "ROBOTSTXT_DOWNLOAD_TIMEOUT", default, integer=False)
    if timeout <= 0:
        raise SettingError(f"ROBOTSTXT_DOWNLOAD_TIMEOUT must be above 0, got {timeout}")
    downloads = read_number(
        settings, "ROBOTSTXT_CONCURRENT_DOWNLOADS", DEFAULT_CONCURRENT_DOWNLOADS, integer=True
    )
    if downloads < 1:
        raise SettingError(f"ROBOTSTXT_CONCURRENT_DOWNLOADS must be at least 1, got {downloads}")
    return {
        "concurrent_downloads": downloads,
        "download_timeout": timeout,
        "page_download_timeout": pages,
    }


def _held_max(settings: BaseSettings) -> int | None:
    """``held_max`` from ``ROBOTSTXT_HELD_SHARE`` (above 0, at most 1) and
    ``CONCURRENT_REQUESTS``: 0.5 of 16 is 8; ``None`` when ``CONCURRENT_REQUESTS``
    sets no limit."""
    share = read_number(settings, "ROBOTSTXT_HELD_SHARE", DEFAULT_HELD_SHARE, integer=False)
    if not 0 < share <= 1:
        raise SettingError(f"ROBOTSTXT_HELD_SHARE must be above 0 and at most 1, got {share!r}")
    concurrent = _concurrent_requests(settings)
    if concurrent is None or concurrent <= 0:
        return None
    return max(1, int(share * concurrent + 1e-9))  # "above 0": at least one is held


def _park_max(settings: BaseSettings) -> int:
    """``park_max``: ``CONCURRENT_REQUESTS``, at least 1 (16 when Scrapy's own
    check of the setting will fail); the Redis queue bounds it further."""
    concurrent = _concurrent_requests(settings)
    return max(1, 16 if concurrent is None else concurrent)


def _concurrent_requests(settings: BaseSettings) -> int | None:
    """Scrapy's ``CONCURRENT_REQUESTS``; ``None`` when it is no integer (Scrapy
    reports its own setting)."""
    try:
        return settings.getint("CONCURRENT_REQUESTS", 16)
    except (TypeError, ValueError):
        return None


def _keeps_queue(settings: BaseSettings) -> bool:
    """Whether the scheduler keeps its queue for the next run: ``JOBDIR`` is
    set (Scrapy's disk queues) or ``SCHEDULER_PERSIST`` is true (scrapy-redis)."""
    return bool(settings.get("JOBDIR")) or read_bool(settings, "SCHEDULER_PERSIST")


#: ``ROBOTSTXT_SET_ASIDE_MAX``'s default: about 130 MB of copies with short URLs
DEFAULT_SET_ASIDE_MAX = 100_000


def set_aside_max(settings: BaseSettings) -> int:
    """``ROBOTSTXT_SET_ASIDE_MAX``: with a scheduler queue that is not ours, the most
    request copies set aside in memory at once (past it, requests wait in the
    middleware, taking concurrency, as beyond none)."""
    raw = settings.get("ROBOTSTXT_SET_ASIDE_MAX")
    if raw is None:
        return DEFAULT_SET_ASIDE_MAX
    value = read_number(settings, "ROBOTSTXT_SET_ASIDE_MAX", DEFAULT_SET_ASIDE_MAX, integer=True)
    return int(value)

"""What a robots.txt fetch came to, and what that means for a URL (RFC 9309 2.3).

Pure, no Scrapy import.
"""

from __future__ import annotations

import enum
import sys
import zlib
from typing import NamedTuple

from ..parser._compact import CompactRobots
from ..parser._encoding import path_of
from ..parser._matcher import Verdict
from ..parser._robotstxt import RobotsTxt
from ..parser._verdicts import ResolvedVerdict, Verdicts
from ._site import robots_url

__all__ = ["DISALLOW_ALL", "Decision", "Kind", "SiteOutcome", "kind_of_status"]


class Kind(enum.Enum):
    """RFC 9309 2.3.1: the three results of fetching a robots.txt."""

    PARSED = "parsed"  # 2xx: follow the parseable rules (2.3.1.1)
    UNAVAILABLE = "unavailable"  # 4xx, or too many redirects: allow all (2.3.1.3)
    UNREACHABLE = "unreachable"  # 5xx, 429, network errors: disallow all (2.3.1.4)
    #: 401 / 403 with ``ROBOTSTXT_AUTH_DISALLOW``: disallow all
    #: (HTTP: The Definitive Guide ch. 9; RFC 9309 2.3.1.3 allows all).
    RESTRICTED = "restricted"
    #: Not an answer of the site: a bug or an incompatible component failed
    #: while fetching or parsing; disallow all, logged at ERROR.
    INTERNAL_ERROR = "internal_error"
    #: Not an answer of the site either: this crawler cannot download the site's
    #: URLs (no download handler for the scheme, ``s3:`` without botocore). The
    #: site's requests go to Scrapy unchecked, which fails each at once with its
    #: own error (``NotSupported``); never deferred, never stored.
    NOT_DOWNLOADABLE = "not_downloadable"


#: Kinds under which every request to the site is dropped.
DISALLOW_ALL = frozenset({Kind.UNREACHABLE, Kind.RESTRICTED, Kind.INTERNAL_ERROR})

AUTH_STATUSES = frozenset({401, 403})


def kind_of_status(status: int, *, auth_disallow: bool = False) -> Kind | None:
    """The kind of a final HTTP status; ``None`` for a redirect (3xx).

    429 Too Many Requests is a server asking for time, not a missing file,
    so it counts as unreachable, like 5xx. With ``auth_disallow``, 401 and
    403 mean access completely restricted (HTTP: The Definitive Guide ch. 9)
    instead of unavailable (RFC 9309 2.3.1.3).
    """
    if 200 <= status < 300:
        return Kind.PARSED
    if 300 <= status < 400:
        return None
    if auth_disallow and status in AUTH_STATUSES:
        return Kind.RESTRICTED
    if 400 <= status < 500 and status != 429:
        return Kind.UNAVAILABLE
    return Kind.UNREACHABLE


class Decision(NamedTuple):
    """The answer for one request: allowed or not, the verdict and the why."""

    allowed: bool
    verdict: Verdict | None
    reason: str
    #: why a request is dropped, the stats sub-key: ``robotstxt/forbidden/{cause}``
    cause: str = "rule"
    #: the ``ROBOTSTXT_ALSO_OBEY`` token whose group refused it (``None``: the
    #: crawl's own token, or no rule)
    agent: str | None = None


_ALLOWED_WITHOUT_RULES = Decision(True, None, "no rule applies: everything allowed")
_ALLOWED_BY_RULES = Decision(True, None, "allowed by robots.txt")
_NOT_CHECKED = Decision(True, None, "not checked: the crawler cannot download this site's URLs")
#: Sitemap lines longer than this in all are kept compressed (a hostile file may
#: hold thousands; a cached site keeps them for as long as its rules).
_SITEMAPS_PACKED_OVER = 2048


def _pack(sitemaps: tuple[str, ...]) -> str | bytes | None:
    if not sitemaps:
        return None
    text = "\n".join(sitemaps)
    if len(text) <= _SITEMAPS_PACKED_OVER:
        return text
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6)


def _matched(verdict: object, url: str) -> str:
    """`` (matched as /private/a, ...)`` when a rule matched only the path the server
    resolves the URL's path to (``LENIENT(dot-segments)``); empty otherwise."""
    if not isinstance(verdict, ResolvedVerdict):
        return ""
    return matched_note(verdict.matched_as, url)


def matched_note(matched_as: str, url: str) -> str:
    """`` (matched as /private/a, the path the server resolves /./private/a to)``:
    what a drop line and ``scrapy robotstxt`` add to a ``LENIENT(dot-segments)``
    denial."""
    return f" (matched as {matched_as}, the path the server resolves {path_of(url)} to)"


class SiteOutcome:
    """The outcome of one site's robots.txt fetch, valid until ``expires_at``."""

    __slots__ = (
        "_sitemaps",
        "chain",
        "detail",
        "expires_at",
        "fetched_at",
        "kind",
        "lifetime",
        "retry_after",
        "robots",
    )

    def __init__(
        self,
        kind: Kind,
        robots: Verdicts | None,
        detail: str,
        expires_at: float,
        chain: tuple[tuple[str, int | None], ...] = (),
        lifetime: str = "",
        *,
        retry_after: bool = False,
        sitemaps: tuple[str, ...] = (),
        fetched_at: float | None = None,
    ):
        self.kind = kind
        #: the parsed file (``PARSED`` only); ``None`` when nothing in it can forbid
        self.robots = robots
        #: what happened, for logs: "HTTP 404", "ConnectError", "6 redirects"
        self.detail = sys.intern(detail)
        self.expires_at = expires_at
        #: When the answer came (the same clock as ``expires_at``; a stored
        #: record's own fetch time); ``None``: not known. With ``expires_at``
        #: it bounds how long the outcome still decides the requests its fetch
        #: released (:func:`~._sitetable.released_until`, RFC 9309 2.4).
        self.fetched_at = fetched_at
        #: The robots.txt URLs requested, first to last, each with the HTTP
        #: status it answered (``None``: no response). More than one when
        #: redirected (RFC 9309 2.3.1.2).
        self.chain = chain
        #: What set ``expires_at``: "Cache-Control: max-age=3600",
        #: "ROBOTSTXT_CACHE_TTL (no cache directive)", ... (RFC 9309 2.4).
        self.lifetime = sys.intern(lifetime)
        #: ``expires_at`` is the time the site asked for (``Retry-After`` of
        #: a 429 / 503): no attempt is made sooner.
        self.retry_after = retry_after
        self._sitemaps = _pack(sitemaps)

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """The file's ``Sitemap`` URLs as written, in file order (RFC 9309 2.2.4);
        kept when the outcome is compacted, so a cached site still has them."""
        packed = self._sitemaps
        if packed is None:
            robots = self.robots
            return robots.sitemaps if isinstance(robots, RobotsTxt) else ()
        if isinstance(packed, bytes):
            packed = zlib.decompress(packed).decode("utf-8", "surrogatepass")
        return tuple(packed.split("\n"))

    @property
    def source(self) -> str:
        """The robots.txt this outcome came from, for messages.

        ``http://a/robots.txt -> https://b/robots.txt (301)`` when redirected,
        so that a line number points at the file it belongs to.
        """
        if not self.chain:
            return ""
        text = self.chain[0][0]
        for (_, status), (url, _) in zip(self.chain, self.chain[1:], strict=False):
            text += f" -> {url} ({status})"
        return text

    def compact(self) -> SiteOutcome:
        """This outcome as a cache keeps it.

        A file that forbids nothing keeps no copy, so sites whose robots.txt is
        missing, unavailable or allows everything cost a few hundred bytes;
        any other keeps its compiled rules and its body compressed.
        """
        robots = self.robots
        if not isinstance(robots, RobotsTxt):
            return self
        kept = None if robots.allows_everything else CompactRobots(robots)
        return SiteOutcome(
            self.kind,
            kept,
            self.detail,
            self.expires_at,
            self.chain,
            self.lifetime,
            retry_after=self.retry_after,
            sitemaps=robots.sitemaps,
            fetched_at=self.fetched_at,
        )

    def crawl_delay(self, agent: str) -> float | None:
        """The Crawl-delay the file asks of ``agent`` (whole or compacted); ``None``
        when it asks none or there is no file."""
        robots = self.robots
        return None if robots is None else robots.crawl_delay(agent)

    def has_crawl_delay(self) -> bool:
        """Whether the file asks a Crawl-delay of any agent."""
        robots = self.robots
        return robots is not None and robots.has_crawl_delay()

    def decide(self, url: str, token: str, site: str, also: tuple[str, ...] = ()) -> Decision:
        """Allowed or not, with the reason a user reads in logs and exceptions.

        ``also`` (``ROBOTSTXT_ALSO_OBEY``): further product tokens; the URL is
        allowed only if ``token`` and each of them is, each by its own groups
        (RFC 9309 2.2.1, falling back to ``*``), as Google's ``AllowedByRobots``
        takes several user agents. The first that refuses decides the message.
        """
        if self.kind in DISALLOW_ALL:
            return self._disallow_all(site)
        robots = self.robots
        if robots is None:
            return _NOT_CHECKED if self.kind is Kind.NOT_DOWNLOADABLE else _ALLOWED_WITHOUT_RULES
        verdict = robots.denial(url=url, agent=token)
        if verdict is not None:
            return self._refused(verdict, url, site, "")
        for agent in also:  # empty unless ROBOTSTXT_ALSO_OBEY: the hot path skips it
            verdict = robots.denial(url=url, agent=agent)
            if verdict is not None:
                return self._refused(verdict, url, site, agent)
        return _ALLOWED_BY_RULES  # the hot path: no Verdict built

    def _refused(self, verdict: Verdict, url: str, site: str, agent: str) -> Decision:
        """A request a rule refuses: the rule, its line and the file; ``agent``: the
        ``ROBOTSTXT_ALSO_OBEY`` token whose group refused it (empty: our own)."""
        whose = f" for {agent} (ROBOTSTXT_ALSO_OBEY)" if agent else ""
        return Decision(
            False,
            verdict,
            f'Forbidden by robots.txt line {verdict.line}{whose}: "{verdict.rule}"'
            f"{_matched(verdict, url)} ({self.source or robots_url(site)})",
            agent=agent or None,
        )

    def _disallow_all(self, site: str) -> Decision:
        where = self.source or robots_url(site)
        if self.kind is Kind.RESTRICTED:
            reason = (
                f"Forbidden: robots.txt answered {self.detail} at {where}, the whole site "
                "is disallowed (ROBOTSTXT_AUTH_DISALLOW; HTTP: The Definitive Guide ch. 9)"
            )
        elif self.kind is Kind.INTERNAL_ERROR:
            reason = (
                f"Forbidden: internal error while fetching robots.txt at {where} "
                f"({self.detail}), the whole site is disallowed; see the ERROR in the log"
            )
        else:
            reason = (
                f"Forbidden: robots.txt unreachable ({self.detail}) at {where}, "
                "the whole site is disallowed (RFC 9309 2.3.1.4)"
            )
        return Decision(False, None, reason, self.kind.value)

    def __repr__(self) -> str:
        return f"<SiteOutcome {self.kind.value} {self.detail}>"

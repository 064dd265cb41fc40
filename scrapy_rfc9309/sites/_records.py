"""A fetch as the store keeps it, and a stored record back as an outcome, with the
settings of the crawl that reads it. Pure: the clocks are passed in.

The store keeps what was fetched (the final HTTP status, the body as received
up to the writer's ``ROBOTSTXT_MAX_SIZE``, whether that cut it, the size limit
used); each reader derives its own answer from it with its own settings, so a
record saved by a crawl with other settings is obeyed as the reader's settings
say (RFC 9309 2.4, 2.5; HTTP: The Definitive Guide ch. 9 for 401/403). A
record saved before these fields were kept is read as it was saved.

A record dated after the reader's clock (plus :data:`FUTURE_SKEW_SECONDS`) is
not used: a skewed clock or a damaged record would otherwise be obeyed, its
lifetime counted from a time still to come (RFC 9309 2.4 counts it from the
fetch).
"""

from __future__ import annotations

import datetime
import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._outcome import Kind, SiteOutcome
from ._store import FetchRecord

if TYPE_CHECKING:
    from ..parser._tdmrep import TdmRep

__all__ = [
    "FUTURE_SKEW_SECONDS",
    "RETRY_AFTER_MIN",
    "ReaderLimits",
    "StoredAnswer",
    "answer_of",
    "dated_ahead",
    "record_of",
    "stored_tdmrep_rules",
    "usable_until",
]

#: A ``Retry-After`` of 0 still waits this long, so a site answering every
#: robots.txt request with it is not asked once per page.
RETRY_AFTER_MIN = 1.0
#: How far ahead of the reader's clock a record may be dated and still be used:
#: the clocks of the processes sharing a store may differ by this much. A record
#: fetched later than that (a skewed clock, a damaged record) is not used.
FUTURE_SKEW_SECONDS = 60.0
#: Statuses that disallow everything with ``ROBOTSTXT_AUTH_DISALLOW``, else allow all.
_AUTH_STATUSES = frozenset({401, 403})
_ANSWERED_4XX = frozenset({Kind.UNAVAILABLE, Kind.RESTRICTED})


@dataclass(frozen=True)
class ReaderLimits:
    """The settings of the crawl (or report) reading a stored record."""

    #: ``ROBOTSTXT_MAX_SIZE``
    max_size: int
    #: ``ROBOTSTXT_AUTH_DISALLOW``: 401/403 disallow everything
    auth_disallow: bool
    #: ``ROBOTSTXT_CACHE_TTL``
    cache_ttl: float
    #: ``ROBOTSTXT_UNREACHABLE_TTL``
    unreachable_ttl: float
    #: ``ROBOTSTXT_RETRY_AFTER_MAX``
    retry_after_max: float

    @classmethod
    def of(cls, settings: Any) -> ReaderLimits:
        """The limits of an object with these attributes (``RobotsTxtSettings``)."""
        return cls(
            max_size=int(settings.max_size),
            auth_disallow=bool(settings.auth_disallow),
            cache_ttl=float(settings.cache_ttl),
            unreachable_ttl=float(settings.unreachable_ttl),
            retry_after_max=float(settings.retry_after_max),
        )


@dataclass(frozen=True)
class StoredAnswer:
    """What a stored record stands for to one reader."""

    kind: Kind
    #: the body to parse with the reader's ``max_size`` (``kind`` parsed only)
    body: bytes | None
    detail: str
    chain: tuple[tuple[str, int | None], ...]
    lifetime: str
    retry_after: bool
    #: Unix time until which it may be used (:func:`usable_until`)
    usable_until: float
    #: Unix time of its fetch, as the record says
    fetched_at: float
    #: why this reader cannot use it (the site is fetched again); ``None``: usable
    problem: str | None = None
    #: whether ``problem`` says the record is damaged or hostile (not merely
    #: written with other settings)
    damaged: bool = False

    def outcome(
        self, robots: Any, expires_at: float, fetched_at: float | None = None
    ) -> SiteOutcome:
        """The outcome, with the parsed body, an expiry and the record's fetch time
        on the caller's clock (:meth:`outcome_now`)."""
        return SiteOutcome(
            self.kind,
            robots,
            self.detail,
            expires_at,
            self.chain,
            self.lifetime,
            retry_after=self.retry_after,
            fetched_at=fetched_at,
        )

    def outcome_now(self, robots: Any, *, wall: float, monotonic: float) -> SiteOutcome:
        """The outcome, its times moved to the monotonic clock: ``wall`` and
        ``monotonic`` are the two clocks read at the same moment. Its fetch time
        is the record's own (RFC 9309 2.4: a copy's age counts from its fetch,
        not from this read), never after now."""
        try:
            age = max(0.0, wall - float(self.fetched_at))
        except (TypeError, ValueError):
            age = 0.0
        expires = self.expires_on(wall=wall, monotonic=monotonic)
        return self.outcome(robots, expires, monotonic - age)

    def expires_on(self, *, wall: float, monotonic: float) -> float:
        """:attr:`usable_until` on the monotonic clock (``wall`` and ``monotonic``
        read at the same moment); now, if it has passed."""
        return monotonic + max(0.0, self.usable_until - wall)


def _kind(value: str) -> Kind:
    try:
        return Kind(value)
    except ValueError:
        return Kind.INTERNAL_ERROR


def usable_until(record: FetchRecord, limits: ReaderLimits, kind: Kind | None = None) -> float:
    """The Unix time until which a stored record may be used: its own ``expires_at``,
    never later than ``fetched_at`` plus the reader's limit for its kind.

    RFC 9309 2.4: a cached robots.txt is not used for more than 24 hours (or the
    configured TTL), counted from when it was fetched, not from when a later run
    read it. ``ROBOTSTXT_CACHE_TTL`` for parsed, unavailable and restricted
    answers, ``ROBOTSTXT_UNREACHABLE_TTL`` for an unreachable one,
    ``ROBOTSTXT_RETRY_AFTER_MAX`` for one with ``Retry-After``. A record of an
    unknown kind gets the shortest of them.
    """
    if kind is None:
        kind = _kind(record.kind)
    if kind is Kind.UNREACHABLE:
        limit = (
            max(RETRY_AFTER_MIN, limits.retry_after_max)
            if record.retry_after
            else limits.unreachable_ttl
        )
    elif kind in (Kind.PARSED, Kind.UNAVAILABLE, Kind.RESTRICTED):
        limit = limits.cache_ttl
    else:
        limit = min(limits.cache_ttl, limits.unreachable_ttl, limits.retry_after_max)
    try:
        return float(min(record.expires_at, record.fetched_at + limit))
    except TypeError:
        return float("-inf")


def dated_ahead(record: FetchRecord, now: float) -> bool:
    """Whether ``record`` says it was fetched after ``now`` (the reader's wall
    clock) plus :data:`FUTURE_SKEW_SECONDS`: it cannot be trusted (RFC 9309 2.4
    counts a copy's lifetime from its fetch, which cannot lie ahead)."""
    return not record.fetched_at <= now + FUTURE_SKEW_SECONDS


def iso_time(unix: float) -> str:
    """``2026-11-22T04:03:03Z``: a Unix time as UTC ISO 8601, for messages."""
    try:
        moment = datetime.datetime.fromtimestamp(unix, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{unix!r} (Unix time)"
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def exact_iso_time(unix: float) -> str:
    """:func:`iso_time` to the millisecond when the time is not a whole second
    (``2026-11-22T04:03:03.708Z``), rounded up: a time printed for a record's
    fetch, given back to ``scrapy robotstxt --at``, is never before it."""
    if unix == int(unix):
        return iso_time(unix)
    try:
        moment = datetime.datetime.fromtimestamp(
            math.ceil(unix * 1000) / 1000, tz=datetime.timezone.utc
        )
    except (OverflowError, OSError, ValueError):
        return f"{unix!r} (Unix time)"
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def answer_of(
    record: FetchRecord,
    body: bytes | None,
    site: str,
    limits: ReaderLimits,
    *,
    now: float | None = None,
) -> StoredAnswer:
    """What ``record`` (read for ``site``, with its body) stands for to a reader
    with ``limits`` whose wall clock reads ``now`` (``None``: a report at a past
    time, where the date is not checked).

    Store contents are not trusted: a record of another site, of an unknown
    kind, a parsed one without its body, or one dated after ``now``
    (:func:`dated_ahead`) cannot be used (``damaged``). A body
    cut at a size limit smaller than the reader's cannot serve it: the reader
    would have read further (RFC 9309 2.5). A 401 or 403 is restricted or
    unavailable as the reader's ``ROBOTSTXT_AUTH_DISALLOW`` says.
    """
    kind = _kind(record.kind)
    if kind in _ANSWERED_4XX and record.status in _AUTH_STATUSES:
        kind = Kind.RESTRICTED if limits.auth_disallow else Kind.UNAVAILABLE
    problem = None
    damaged = False
    if record.site != site:
        problem, damaged = f"a record of {record.site}", True
    elif now is not None and dated_ahead(record, now):
        problem = (
            f"dated {iso_time(record.fetched_at)}, after this crawl's clock "
            f"({iso_time(now)}) by more than {FUTURE_SKEW_SECONDS:g} s"
        )
        damaged = True
    elif kind is Kind.INTERNAL_ERROR:
        problem, damaged = f"an unknown kind {record.kind!r}", True
    elif kind is Kind.PARSED and body is None:
        problem, damaged = "parsed, without its body", True
    elif (
        kind is Kind.PARSED
        and record.truncated
        and record.max_size is not None
        and record.max_size < limits.max_size
    ):
        problem = (
            f"its body was cut at {record.max_size} bytes, less than this crawl's "
            f"ROBOTSTXT_MAX_SIZE ({limits.max_size})"
        )
    return StoredAnswer(
        kind=kind,
        body=body if kind is Kind.PARSED else None,
        detail=record.detail,
        chain=tuple(record.chain),
        lifetime=record.lifetime,
        retry_after=record.retry_after,
        usable_until=usable_until(record, limits, kind),
        fetched_at=record.fetched_at,
        problem=problem,
        damaged=damaged,
    )


def record_of(
    site: str,
    outcome: SiteOutcome,
    body: bytes | None,
    *,
    now: float,
    monotonic_now: float,
    max_size: int,
    truncated: bool | None = None,
) -> FetchRecord:
    """The store's record of a fetch that came to ``outcome`` (expiry on the
    monotonic clock ``monotonic_now``) at wall-clock ``now``, by a crawl whose
    ``ROBOTSTXT_MAX_SIZE`` is ``max_size``; ``truncated``: whether that limit cut
    the body (taken from the parsed file when not given). The digest of ``body``
    is left to the store when it is ``None`` here."""
    remaining = outcome.expires_at - monotonic_now
    if truncated is None:
        truncated = bool(getattr(outcome.robots, "truncated", False))
    chain = tuple(outcome.chain)
    return FetchRecord(
        site=site,
        fetched_at=now,
        chain=chain,
        kind=outcome.kind.value,
        detail=outcome.detail,
        lifetime=outcome.lifetime,
        expires_at=now + max(0.0, remaining),
        retry_after=outcome.retry_after,
        size=0 if body is None else len(body),
        sha256=None if body is None else hashlib.sha256(body).hexdigest(),
        status=chain[-1][1] if chain else None,
        truncated=truncated,
        max_size=max_size,
    )


def stored_tdmrep_rules(answer: StoredAnswer) -> TdmRep:
    """The tdmrep.json rules a usable stored copy stands for, read as the crawl
    read its download (W3C TDMRep): a parsed body's rules; any other answer (a
    4xx, a 429 or 5xx while it lasts) states nothing."""
    from ..parser._tdmrep import EMPTY_TDMREP, parse_tdmrep

    if answer.kind is Kind.PARSED and answer.body is not None:
        return parse_tdmrep(answer.body)
    return EMPTY_TDMREP

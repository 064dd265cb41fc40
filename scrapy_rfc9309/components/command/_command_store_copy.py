"""The copy of a site's robots.txt in the project's store that a crawl started now obeys.

RFC 9309 2.4: a crawl with ``ROBOTSTXT_STORE_URI`` uses a stored copy still
within its lifetime instead of downloading the file again. The live answer
of ``scrapy robotstxt`` is a fresh download; when the store holds a copy in
force now whose body differs from it (sha256), the answer says so
(``store_copy``), with that copy's verdict for the URL, decided by the same
function. The store is read as ``--at NOW`` reads it (``_command_store``),
read-only: a store that does not exist is not made, and means no copy.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...parser._robotstxt import RobotsTxt
from ...sites._outcome import Kind, SiteOutcome
from ..settings._settings import RobotsTxtSettings

__all__ = ["StoreCopy", "add_store_copy", "store_copies"]

logger = logging.getLogger("scrapy_rfc9309.command")

#: The live outcomes a download came to (the site's answer), compared with a copy.
_ANSWERED = frozenset({Kind.PARSED, Kind.UNAVAILABLE, Kind.UNREACHABLE, Kind.RESTRICTED})


@dataclass(frozen=True)
class StoreCopy:
    """A stored copy of a site's robots.txt that a crawl would use now."""

    outcome: SiteOutcome
    fetched_at: float
    #: Unix time until which a crawl uses it (its lifetime, capped by the settings)
    expires_at: float
    #: of its body; ``None`` for an answer without one (404, 503)
    sha256: str | None


def store_copies(
    scrapy_settings: Any,
    sites: Iterable[str],
    settings: RobotsTxtSettings,
    now: float | None = None,
) -> dict[str, StoreCopy]:
    """Each of ``sites``' copy in the project's store (``ROBOTSTXT_STORE_URI``) in
    force at ``now`` (Unix time; the clock's when not given), as a crawl started
    then would read it: ``{}`` without a store, or when the store does not exist.
    A store that fails is said in one WARNING, and gives none."""
    from ...sites._records import ReaderLimits, answer_of
    from ...sites._store import NoStore, StoreError
    from ...sites._store_uri import without_password
    from ..settings._store_settings import StoreSettings
    from ._command_store import close_quietly, stored_outcome

    configured = StoreSettings.from_settings(scrapy_settings)  # checked already
    sites = list(sites)
    if not configured.uri or not sites:
        return {}
    when = time.time() if now is None else now
    limits = ReaderLimits.of(settings)
    found: dict[str, StoreCopy] = {}
    try:
        store = configured.open(read_only=True)  # never made nor changed by a report
    except NoStore:
        return {}
    except (StoreError, ValueError) as error:
        _warn(without_password(configured.uri), error)
        return {}
    try:
        for site in sites:
            kept = store.at(site, when)
            if kept is None:
                continue
            record, body = kept
            answer = answer_of(record, body, site, limits, now=when)
            if answer.problem is not None or answer.usable_until <= when:
                continue  # a crawl would not use it: it downloads the file
            outcome = stored_outcome(record, body, settings)
            found[site] = StoreCopy(outcome, record.fetched_at, answer.usable_until, record.sha256)
    except StoreError as error:
        _warn(store.uri, error)
        return {}
    finally:
        close_quietly(store)
    return found


def _warn(uri: str, error: BaseException) -> None:
    logger.warning(
        "robots.txt store %s could not be read (%s): the answers do not say whether a "
        "crawl started now would obey a stored copy instead of this download",
        uri,
        error,
    )


def add_store_copy(
    answer: dict[str, Any],
    copy: StoreCopy | None,
    live: SiteOutcome | None,
    decide: Callable[[SiteOutcome], dict[str, Any]],
) -> None:
    """Add ``store_copy`` to ``answer`` (the live one) when ``copy``, in force now,
    differs from the ``live`` download (its kind or its body's sha256): what a
    crawl started now obeys until it expires. ``decide``: the answer for an
    outcome, as the live one was made (the same decision, policy and purposes)."""
    if copy is None or live is None or live.kind not in _ANSWERED:
        return
    body = live.robots.body if isinstance(live.robots, RobotsTxt) else None
    digest = None if body is None else hashlib.sha256(body).hexdigest()
    if (copy.outcome.kind, copy.sha256) == (live.kind, digest):
        return
    from ...sites._records import exact_iso_time as utc_iso

    decided = decide(copy.outcome)
    answer["store_copy"] = {
        "fetched_at": utc_iso(copy.fetched_at),
        "expires_at": utc_iso(copy.expires_at),
        "sha256": copy.sha256,
        "outcome": copy.outcome.kind.value,
        "verdict": decided["verdict"],
        "cause": decided["cause"],
        "rule": decided["rule"],
        "line": decided["line"],
        # as in the answer: the ROBOTSTXT_ALSO_OBEY token whose rule refused, and
        # the usage preference that refuses a declared purpose
        "decided_by": decided.get("decided_by"),
        "refused": decided.get("refused"),
    }

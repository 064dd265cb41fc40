"""The lines of a crawl's record (``ROBOTSTXT_RECORD_FILE``), each chained to the one before. Pure.

A record is JSON Lines: a ``header`` line (the package version, the product
token, the settings that change decisions, the start time), a ``robots`` line
each time a robots.txt copy comes into force for a site (its outcome, the
URLs asked and their statuses, the body as read and its SHA-256), a
``tdmrep`` line for each tdmrep.json put in force, a ``request`` line for each
request decided (the copy in force named by the hash of its ``robots``
line), ``page`` and ``page_drop`` lines for what a downloaded page said and
what the crawl did with it, and a ``close`` line. Every line carries, as
``prev``, the SHA-256 of the line before it (the first: :data:`GENESIS`), so
an edit, a removal or a reordering breaks the chain at the next line
(``scrapy robotstxt audit``, :mod:`._record_audit`).

No Scrapy, no clock: every time and value is given.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..parser._usage import Usage

if TYPE_CHECKING:
    from ..parser._tdmrep import TdmRep
    from ._outcome import SiteOutcome
    from ._request_decision import DecisionPolicy, RequestDecision

__all__ = [
    "FORMAT",
    "GENESIS",
    "RecordChain",
    "body_fields",
    "close_entry",
    "header_entry",
    "iso",
    "line_hash",
    "request_entry",
    "robots_entry",
    "tdmrep_entry",
    "usage_entry",
]

#: The record format's version, in its header line.
FORMAT = 1
#: The ``prev`` of the first line: no line before it.
GENESIS = "0" * 64


def line_hash(line: str) -> str:
    """The SHA-256 of one line as written (UTF-8, without its line end)."""
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def iso(unix: float) -> str:
    """``2026-11-29T07:40:03.250Z``: a Unix time as UTC ISO 8601, to the millisecond."""
    try:
        moment = datetime.datetime.fromtimestamp(unix, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return repr(unix)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RecordChain:
    """Lines chained by the SHA-256 of the line before: :meth:`line` gives the
    next line's text and makes it the one the following line refers to."""

    __slots__ = ("last",)

    def __init__(self, last: str = GENESIS) -> None:
        #: the hash of the last line given (:data:`GENESIS` before the first)
        self.last = last

    def line(self, entry: Mapping[str, Any]) -> str:
        """``entry`` as one JSON line (ASCII, no line end), chained to the last."""
        text = json.dumps({**entry, "prev": self.last}, ensure_ascii=True, separators=(",", ":"))
        self.last = line_hash(text)
        return text


def body_fields(body: bytes | None) -> dict[str, Any]:
    """A body as a line keeps it: its size and SHA-256, and the text itself
    (``body``) when it is UTF-8, else ``body_base64``; no body: ``None`` fields."""
    if body is None:
        return {"size": None, "sha256": None, "body": None}
    fields: dict[str, Any] = {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}
    try:
        fields["body"] = body.decode("utf-8")
    except UnicodeDecodeError:
        fields["body_base64"] = base64.b64encode(body).decode("ascii")
    return fields


def body_of(entry: Mapping[str, Any]) -> bytes | None:
    """The body a line keeps (:func:`body_fields`); ``None``: none kept.
    Raises ``ValueError`` for a field that is not what the writer writes."""
    text = entry.get("body")
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    coded = entry.get("body_base64")
    if isinstance(coded, str):
        return base64.b64decode(coded.encode("ascii"), validate=True)
    if text is None and coded is None:
        return None
    raise ValueError("a body that is neither text nor base64")


def header_entry(
    *,
    version: str,
    token: str,
    policy: DecisionPolicy,
    max_size: int,
    auth_disallow: bool,
    page: Mapping[str, Any],
    started: float,
    spider: str,
) -> dict[str, Any]:
    """The first line: what the record's decisions were made with."""
    return {
        "type": "header",
        "format": FORMAT,
        "package": "scrapy-rfc9309",
        "version": version,
        "spider": spider,
        "token": token,
        "started": iso(started),
        "policy": {
            "also_obey": list(policy.also_obey),
            "purposes": list(policy.purposes),
            "page_decides": policy.page_decides,
            "crawl_delay_max": policy.crawl_delay_max,
        },
        "robots": {"max_size": max_size, "auth_disallow": auth_disallow},
        "page": dict(page),
    }


def robots_entry(
    site: str, outcome: SiteOutcome, body: bytes | None, fetched_at: float, truncated: bool
) -> dict[str, Any]:
    """A robots.txt copy in force for ``site`` from now: its outcome, the URLs
    asked and their statuses (RFC 9309 2.3.1.2), and the body as read (cut at
    ``ROBOTSTXT_MAX_SIZE``, RFC 9309 2.5: ``truncated``)."""
    return {
        "type": "robots",
        "site": site,
        "fetched_at": iso(fetched_at),
        "outcome": outcome.kind.value,
        "detail": outcome.detail,
        "chain": [[url, status] for url, status in outcome.chain],
        "lifetime": outcome.lifetime,
        "retry_after": outcome.retry_after,
        "truncated": truncated,
        **body_fields(body),
    }


def tdmrep_entry(site: str, rules: TdmRep, body: bytes | None, now: float) -> dict[str, Any]:
    """A site's tdmrep.json in force from now: the body its rules were read
    from (``None``: the file stated nothing: missing, unreadable)."""
    return {
        "type": "tdmrep",
        "site": site,
        "fetched_at": iso(now),
        "rules": len(rules.rules),
        "error": rules.error or None,
        **body_fields(body),
    }


def usage_entry(sources: Iterable[tuple[str, Usage]]) -> dict[str, Any]:
    """Each source that states a preference, as its preferences."""
    return {name: usage.as_dict() for name, usage in sources if isinstance(usage, Usage) and usage}


def request_entry(
    decision: RequestDecision,
    *,
    site: str,
    method: str,
    now: float,
    robots: str | None,
    tdmrep: str | None,
) -> dict[str, Any]:
    """One request decided: ``robots`` and ``tdmrep``, the hashes of the lines of
    the copies in force (``tdmrep``: ``None`` when not read)."""
    entry: dict[str, Any] = {
        "type": "request",
        "time": iso(now),
        "url": decision.url,
        "method": method,
        "site": site,
        "token": decision.token,
        "decision": "fetched" if decision.fetch else "dropped",
        "cause": decision.cause,
        "reason": decision.reason,
        "verdicts": verdicts_of(decision),
        "robots": robots,
        "tdmrep": tdmrep,
    }
    usage = decision.usage
    if usage is not None:
        sources, decided = usage
        refusal = decided.refusal
        entry["usage"] = {
            "sources": usage_entry(sources._asdict().items()),
            "in_force": decided.usage.as_dict(),
            "refusal": None if refusal is None else refusal.describe(),
        }
    delay = decision.crawl_delay
    if delay is not None:
        entry["crawl_delay"] = delay
    return entry


def verdicts_of(decision: RequestDecision) -> list[list[Any]]:
    """Each token's verdict that names a rule: ``[token, allowed, line, rule]``
    (a token no rule matched is allowed, and not listed)."""
    return [
        [verdict.agent, verdict.allowed, verdict.line, verdict.rule]
        for verdict in decision.verdicts()
        if verdict.line is not None or not verdict.allowed
    ]


def close_entry(now: float, counts: Mapping[str, int]) -> dict[str, Any]:
    """The last line, written at close: the lines written before it, by type."""
    return {"type": "close", "time": iso(now), "lines": dict(counts)}

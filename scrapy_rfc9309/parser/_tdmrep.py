"""TDMRep: the site-wide ``/.well-known/tdmrep.json`` (W3C TDMRep community group report). Pure.

No Scrapy import. The file is a JSON array of rules, each
``{"location": "/path/*", "tdm-reservation": 1, "tdm-policy": "https://..."}``;
``tdm-reservation: 1`` reserves text and data mining rights for the resources
at ``location``. Locations are path patterns compiled and matched by the robots.txt
Allow / Disallow matcher (``*`` any run, final ``$`` the end, percent-encoding
normalised; RFC 9309 2.2.2, 2.2.3); the longest matching location decides, and
a reservation wins a tie (the most restrictive).
Reading never raises; at most :data:`MAX_RULES` rules are read.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from ._encoding import canonical_path
from ._matcher import AgentMatcher
from ._rulekey import key_line
from ._usage import NO_PREFERENCES, TDM_CATEGORIES, Preference, Usage

__all__ = [
    "MAX_RULES",
    "TDMREP_PATH",
    "TdmRep",
    "parse_tdmrep",
    "reservation_value",
    "tdm_usage",
]

TDMREP_PATH = "/.well-known/tdmrep.json"
MAX_RULES = 1000


class _Rule(NamedTuple):
    reserved: bool
    text: str


class TdmRep(NamedTuple):
    """A site's parsed tdmrep.json (an empty one: no rules, nothing reserved)."""

    rules: tuple[_Rule, ...] = ()
    #: the locations compiled by the Allow / Disallow compiler (RFC 9309 2.2.2):
    #: a reservation is an "allow", so it wins a tie; rule ``n`` is line ``n + 1``
    matcher: AgentMatcher | None = None
    #: why the file could not be read at all (``""``: it could), e.g. ``not valid JSON``
    error: str = ""
    #: entries left unread: past :data:`MAX_RULES`, and those not a rule (no string
    #: ``location``, or a ``tdm-reservation`` that is neither 0 nor 1)
    past_limit: int = 0
    ignored: int = 0

    def usage(self, url: str) -> Usage:
        """The TDM preference for ``url``: reserved (``n``) or not (``y``), or none."""
        if self.matcher is None:
            return NO_PREFERENCES
        key = self.matcher.decide(canonical_path(url))
        if key is None:
            return NO_PREFERENCES
        best = self.rules[key_line(key) - 1]
        return tdm_usage(not best.reserved, TDMREP_PATH, best.text)


EMPTY_TDMREP = TdmRep()


def tdm_usage(allowed: bool, source: str, rule: str) -> Usage:
    """A TDMRep reservation (or its absence) as preferences of :data:`TDM_CATEGORIES`."""
    return Usage(
        {category: Preference(category, allowed, source, None, rule) for category in TDM_CATEGORIES}
    )


def reservation_value(value: object) -> bool | None:
    """A ``tdm-reservation`` value: reserved (``True``), not (``False``), or unknown.

    TDMRep writes ``1`` / ``0``; ``true``, ``1.0`` and ``"1"`` read as ``1``
    too. Anything else (``false``, ``2``, ``"yes"``) is unknown, never a
    permission: the rule (or header) states nothing.
    """
    if value is True:
        return True
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return True if value == 1 else False if value == 0 else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "1.0", "true"):
            return True
        if text in ("0", "0.0"):
            return False
    return None


def parse_tdmrep(body: bytes) -> TdmRep:
    """The rules of a tdmrep.json body; an empty :class:`TdmRep` for anything
    unreadable, with its :attr:`~TdmRep.error` saying why."""
    try:
        data = json.loads(body.decode("utf-8-sig", "replace"))
    except RecursionError:
        return TdmRep(error="not valid JSON: nested too deeply")
    except ValueError as exc:
        return TdmRep(error=f"not valid JSON: {str(exc)[:120]}")
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return TdmRep(error=f"not a JSON array of rules (a JSON {type(data).__name__})")
    rules: list[_Rule] = []
    patterns: list[tuple[bool, bytes, int]] = []
    ignored = 0
    for entry in data[:MAX_RULES]:
        if not isinstance(entry, dict):
            ignored += 1
            continue
        location = entry.get("location")
        reserved = reservation_value(entry.get("tdm-reservation"))
        if not isinstance(location, str) or reserved is None:
            ignored += 1
            continue
        location = location or "/"  # an empty location: the whole site
        rules.append(
            _Rule(reserved, f'location "{location[:200]}", tdm-reservation {int(reserved)}')
        )
        patterns.append((reserved, location.encode("utf-8", "surrogateescape"), len(rules)))
    return TdmRep(
        tuple(rules),
        AgentMatcher(patterns) if rules else None,
        past_limit=max(0, len(data) - MAX_RULES),
        ignored=ignored,
    )

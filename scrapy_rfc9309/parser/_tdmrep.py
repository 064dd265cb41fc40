"""TDMRep: the site-wide ``/.well-known/tdmrep.json`` (W3C TDMRep community group report). Pure.

No Scrapy import. The file is a JSON array of rules, each
``{"location": "/path/*", "tdm-reservation": 1, "tdm-policy": "https://..."}``;
``tdm-reservation: 1`` reserves text and data mining rights for the resources
at ``location``. Locations are path patterns compiled and matched by the robots.txt
Allow / Disallow matcher (``*`` any run, final ``$`` the end, percent-encoding
normalised; RFC 9309 2.2.2, 2.2.3); as the report says, "the most specific match
is the first in sequence": the first rule in file order whose location matches
decides. ``tdm-reservation`` values other than the integers 0 and 1 are protocol
errors, read as unset (the rule matches and states nothing), each with a
finding; ``tdm-policy`` is carried in the :class:`~._usage.Preference`.
Reading never raises; at most :data:`MAX_RULES` rules are read.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from ._encoding import canonical_path
from ._matcher import AgentMatcher
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


#: Findings kept per file (the count of the rest is said).
MAX_FINDINGS = 20


class _Rule(NamedTuple):
    #: ``None``: ``tdm-reservation`` unset (missing, or a protocol error)
    reserved: bool | None
    text: str
    policy: str | None = None


class TdmRep(NamedTuple):
    """A site's parsed tdmrep.json (an empty one: no rules, nothing reserved)."""

    rules: tuple[_Rule, ...] = ()
    #: every location compiled together by the Allow / Disallow compiler (RFC
    #: 9309 2.2.2): whether any rule matches, in one check
    matcher: AgentMatcher | None = None
    #: why the file could not be read at all (``""``: it could), e.g. ``not valid JSON``
    error: str = ""
    #: entries left unread: past :data:`MAX_RULES`, and those that state nothing
    #: (not an object with a string ``location``, or a ``tdm-reservation`` that
    #: is not the integer 0 or 1)
    past_limit: int = 0
    ignored: int = 0
    #: what the file states less than its writer meant, per entry ("entry 2:
    #: tdm-reservation true is not the integer 0 or 1: unset"), for an INFO log
    findings: tuple[str, ...] = ()
    #: each rule's location compiled alone, in file order: the first that matches decides
    matchers: tuple[AgentMatcher, ...] = ()
    #: the body the rules were read from (kept when it has rules: a crawl's
    #: record shows it); ``None``: not kept
    source: bytes | None = None

    def rule_for(self, url: str) -> _Rule | None:
        """The first rule in file order whose location matches ``url``."""
        if self.matcher is None:
            return None
        path = canonical_path(url)
        if self.matcher.decide(path) is None:  # no location matches: one check
            return None
        for rule, matcher in zip(self.rules, self.matchers, strict=True):
            if matcher.decide(path) is not None:
                return rule
        return None

    def usage(self, url: str) -> Usage:
        """The TDM preference for ``url``: reserved (``n``) or not (``y``), or none
        (no rule matches, or the first that does has no valid ``tdm-reservation``)."""
        rule = self.rule_for(url)
        if rule is None or rule.reserved is None:
            return NO_PREFERENCES
        return tdm_usage(not rule.reserved, TDMREP_PATH, rule.text, rule.policy)


EMPTY_TDMREP = TdmRep()


def tdm_usage(allowed: bool, source: str, rule: str, policy: str | None = None) -> Usage:
    """A TDMRep reservation (or its absence) as preferences of :data:`TDM_CATEGORIES`."""
    return Usage(
        {
            category: Preference(category, allowed, source, None, rule, policy)
            for category in TDM_CATEGORIES
        }
    )


def reservation_value(value: object) -> bool | None:
    """A ``tdm-reservation`` value: reserved (``True``), not (``False``), or unset.

    TDMRep: the integers ``1`` and ``0``; "Other values are considered protocol
    errors" read as unset (``true``, ``1.0``, ``"1"``, ``2`` included): the
    rule states nothing, never a permission.
    """
    if type(value) is int and value in (0, 1):
        return value == 1
    return None


def parse_tdmrep(body: bytes) -> TdmRep:
    """The rules of a tdmrep.json body; an empty :class:`TdmRep` for anything
    unreadable, with its :attr:`~TdmRep.error` saying why.

    The file is a JSON array of rules (TDMRep final report, "TDM Reservation
    File"): a single rule object outside an array is not one, and states
    nothing, as any other malformed file.
    """
    try:
        data = json.loads(body.decode("utf-8-sig", "replace"))
    except RecursionError:
        return TdmRep(error="not valid JSON: nested too deeply")
    except ValueError as exc:
        return TdmRep(error=f"not valid JSON: {str(exc)[:120]}")
    if isinstance(data, dict):  # the report: "an array of rules", even of one
        return TdmRep(error="a single JSON object, not an array of rules")
    if not isinstance(data, list):
        return TdmRep(error=f"not a JSON array of rules (a JSON {type(data).__name__})")
    rules: list[_Rule] = []
    matchers: list[AgentMatcher] = []
    patterns: list[tuple[bool, bytes, int]] = []
    findings: list[str] = []
    ignored = 0
    for number, entry in enumerate(data[:MAX_RULES], 1):
        location = entry.get("location") if isinstance(entry, dict) else None
        if not isinstance(location, str):
            ignored += 1
            findings.append(f"entry {number}: not an object with a string location; ignored")
            continue
        assert isinstance(entry, dict)
        location = location or "/"  # an empty location: the whole site
        raw = entry.get("tdm-reservation")
        reserved = reservation_value(raw)
        policy = entry.get("tdm-policy")
        policy = policy[:2000] if isinstance(policy, str) and policy else None
        shown = f'location "{location[:200]}"'
        if reserved is None:
            ignored += 1
            written = "missing" if raw is None else _shown(raw)
            findings.append(
                f"entry {number} ({shown}): tdm-reservation {written} is not the integer 0 "
                "or 1: a protocol error, read as unset (the rule still matches, stating nothing)"
            )
            text = f"{shown}, tdm-reservation unset"
        else:
            text = f"{shown}, tdm-reservation {int(reserved)}"
        rules.append(_Rule(reserved, text, policy))
        pattern = location.encode("utf-8", "surrogateescape")
        matchers.append(AgentMatcher([(True, pattern, number)]))
        patterns.append((True, pattern, number))
    if len(findings) > MAX_FINDINGS:
        findings[MAX_FINDINGS:] = [f"{len(findings) - MAX_FINDINGS} more entries like these"]
    return TdmRep(
        tuple(rules),
        AgentMatcher(patterns) if rules else None,
        past_limit=max(0, len(data) - MAX_RULES),
        ignored=ignored,
        findings=tuple(findings),
        matchers=tuple(matchers),
        source=body if rules else None,
    )


def _shown(value: object) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:60]

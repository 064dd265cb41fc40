"""Directive lines to groups (RFC 9309 2.1 and 2.2.1). Pure, no Scrapy import.

A group is a run of user-agent lines followed by rules; it ends at the next
user-agent line that follows a rule, or at the end of the file. Sitemap,
Crawl-delay and unknown lines never end a group nor a run of user-agent lines
(RFC 9309 2.2.4). Rules before the first user-agent line are ignored.

Groups are kept once, whatever the number of agents naming them: an index maps
each product token to its groups, so 2,000 user-agent lines over 2,000 rules
cost 2,000 index entries, not four million rule copies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ._agent import is_valid_token, product_token
from ._lines import Line, Warnings
from ._matcher import Rule

__all__ = ["Group", "Grouping", "build_groups"]

WILDCARD_AGENT = "*"


@dataclass(slots=True)
class Group:
    """One group: its user-agent lines as ``(line, token)`` and its records."""

    agents: list[tuple[int, str]] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None


@dataclass(slots=True)
class Grouping:
    """All groups of a file, the token index and the file-wide sitemaps."""

    groups: list[Group]
    by_token: dict[str, list[int]]
    sitemaps: tuple[str, ...]

    def groups_for(self, token: str) -> list[Group]:
        """The groups that govern ``token`` (lower case), merged in file order.

        RFC 9309 2.2.1: exact, case-insensitive match of the product token;
        else the ``*`` groups; else none (everything allowed).
        """
        indexes = self.by_token.get(token) if token and token != WILDCARD_AGENT else None
        if not indexes:
            indexes = self.by_token.get(WILDCARD_AGENT, [])
        return [self.groups[index] for index in indexes]


def _agent_token(line: Line, warnings: Warnings) -> str:
    value = line.value
    if value == WILDCARD_AGENT:
        return WILDCARD_AGENT
    token = product_token(value)
    if not is_valid_token(token):
        warnings.add(line.number, f"user-agent {value[:60]!r} is not a product token ([A-Za-z_-])")
    elif len(token) != len(value):
        # LENIENT(agent-suffix): "Googlebot/2.1" or "Googlebot News" read as "Googlebot".
        warnings.add(line.number, f"user-agent {value[:60]!r} read as product token {token!r}")
    return token


def _crawl_delay(line: Line, warnings: Warnings) -> float | None:
    try:
        delay = float(line.value)
    except ValueError:
        delay = math.nan
    if math.isfinite(delay) and delay >= 0:
        return delay
    warnings.add(line.number, f"crawl-delay {line.value[:30]!r} is not a number of seconds")
    return None


def build_groups(lines: list[Line], warnings: Warnings) -> Grouping:
    """Fold directive lines into groups (RFC 9309 2.1, 2.2.1, 2.2.4)."""
    groups: list[Group] = []
    by_token: dict[str, list[int]] = {}
    sitemaps: list[str] = []
    current: Group | None = None
    rules_started = False
    for line in lines:
        key = line.key
        if key == "user-agent":
            if current is None or rules_started:
                current = Group()
                groups.append(current)
                rules_started = False
            token = _agent_token(line, warnings)
            current.agents.append((line.number, token))
            if token:
                indexes = by_token.setdefault(token, [])
                if not indexes or indexes[-1] != len(groups) - 1:
                    indexes.append(len(groups) - 1)
        elif key in ("allow", "disallow"):
            if current is None:
                warnings.add(line.number, "rule before any user-agent line ignored")
                continue
            rules_started = True
            current.rules.append(_rule(line, warnings))
        elif key == "sitemap":
            if line.value:
                sitemaps.append(line.value)
        elif key == "crawl-delay":
            delay = _crawl_delay(line, warnings)
            if current is None:
                warnings.add(line.number, "crawl-delay before any user-agent line ignored")
            elif delay is not None and current.crawl_delay is None:
                current.crawl_delay = delay
    return Grouping(groups, by_token, tuple(sitemaps))


def _rule(line: Line, warnings: Warnings) -> Rule:
    value = line.value
    if value and not value.startswith(("/", "*")):
        # LENIENT(rule-without-slash): "Disallow: private/" read as "/private/".
        warnings.add(
            line.number, f"rule {value[:60]!r} does not start with '/'; read as '/{value[:60]}'"
        )
        value = "/" + value
    return Rule(line.key == "allow", value, line.number, line.text)

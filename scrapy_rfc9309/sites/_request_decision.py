"""THE decision for one request: fetch it or drop it, why, and under which lines.

Pure, no Scrapy import. From the robots.txt outcome in force for the request's
site, the site's tdmrep.json rules in force (when a declared purpose needs
them), the URL, our product token and the project's :class:`DecisionPolicy`
(``ROBOTSTXT_ALSO_OBEY``, ``ROBOTSTXT_PURPOSES``, whether the page's own
signals are read, ``ROBOTSTXT_CRAWL_DELAY_MAX``), :func:`decide_request` gives
one :class:`RequestDecision`. The crawl (the scheduler queue at pop, the
middleware), the report and every form of ``scrapy robotstxt`` (live,
``--page``, ``--purpose``, ``--at``) take their answer from it, so what the
command says is what the crawl did:

* robots.txt first (RFC 9309 2.2.2 for a parsed file; 2.3.1.3 and 2.3.1.4 for
  an unavailable and an unreachable one): our token and each
  ``ROBOTSTXT_ALSO_OBEY`` token must be allowed, each by its own groups;
* then, for a request robots.txt allows, the declared purposes against the
  usage preferences in force (``decide_usage``: robots.txt ``Content-Usage`` /
  ``Content-Signal`` lines of our groups, tdmrep.json); a refusal by
  tdmrep.json alone is left to the page when its own signals are read (the
  TDMRep report's order of precedence: the page's headers and meta
  supersede the file), so the request is fetched and its items decided after.

What a drop line, the record and the command show besides the cause (each
token's verdict with its rule and line, the Crawl-delay that applies) is
derived on demand from the same inputs: the hot path builds none of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from ..parser._tdmrep import TDMREP_PATH
from ..parser._usage_decision import UsageDecision, UsageSources, decide_usage, site_sources
from ..parser._verdicts import ResolvedVerdict
from ._outcome import Decision, Kind

if TYPE_CHECKING:
    from ..parser._matcher import Verdict
    from ..parser._tdmrep import TdmRep
    from ..parser._usage import Preference
    from ._outcome import SiteOutcome

__all__ = [
    "TDMREP_PENDING",
    "DecisionPolicy",
    "RequestDecision",
    "TdmRepUnread",
    "TokenVerdict",
    "asked_crawl_delay",
    "crawl_delay_of",
    "decide_request",
    "tdmrep_refusal",
]

#: The causes under which a request is downloaded.
FETCHED = frozenset({"allowed", "not_checked"})
#: The cause of a decision that waits for the site's tdmrep.json: not final.
PENDING = "pending"


class TdmRepUnread(NamedTuple):
    """A site's tdmrep.json that is not in force: still to be fetched
    (:data:`TDMREP_PENDING`), or failed for a reason of ours (``error``)."""

    #: what failed (an internal error, not the site's answer); ``None``: pending
    error: str | None = None


#: The site's tdmrep.json is being fetched: the decision waits for it.
TDMREP_PENDING = TdmRepUnread()


@dataclass(frozen=True)
class DecisionPolicy:
    """What the project's settings say about deciding requests, the same for the
    crawl and for ``scrapy robotstxt`` (read once from the settings)."""

    #: ``ROBOTSTXT_ALSO_OBEY``: further product tokens that must allow a URL too
    also_obey: tuple[str, ...] = ()
    #: ``ROBOTSTXT_PURPOSES``: the declared uses checked against usage preferences
    purposes: tuple[str, ...] = ()
    #: the page's own signals are read (``ROBOTS_META_OBEY``): a refusal by
    #: tdmrep.json alone is decided by the page, after download
    page_decides: bool = False
    #: ``ROBOTSTXT_CRAWL_DELAY_MAX``: the longest Crawl-delay honoured
    crawl_delay_max: float = 60.0


class TokenVerdict(NamedTuple):
    """One product token's verdict on a URL, with the rule and line that decided it."""

    agent: str
    allowed: bool
    line: int | None
    rule: str | None
    #: ``LENIENT(dot-segments)``: the path the server resolves the URL's path to,
    #: where only that one matched the deciding rule; else ``None``
    matched_as: str | None


class RequestDecision:
    """What the crawl does with one request before download, and why.

    ``cause`` is ``"allowed"``, ``"not_checked"`` (the crawler cannot download
    the site's URLs: Scrapy fails the request itself), ``"pending"`` (not final:
    robots.txt allows it and a declared purpose waits for the site's
    tdmrep.json), or the drop's stats sub-key (``robotstxt/forbidden/{cause}``):
    ``"rule"``, ``"unreachable"``, ``"restricted"``, ``"internal_error"`` or
    ``"usage"``.
    """

    __slots__ = (
        "cause",
        "outcome",
        "policy",
        "reason",
        "robots",
        "tdmrep",
        "token",
        "url",
        "usage",
    )

    def __init__(
        self,
        outcome: SiteOutcome,
        url: str,
        token: str,
        policy: DecisionPolicy,
        robots: Decision,
        cause: str,
        reason: str,
        usage: tuple[UsageSources, UsageDecision] | None = None,
        tdmrep: TdmRep | TdmRepUnread | None = None,
    ) -> None:
        #: the robots.txt outcome in force
        self.outcome = outcome
        self.url = url
        self.token = token
        self.policy = policy
        #: robots.txt's part: allowed or the line that refused, and for which token
        self.robots = robots
        self.cause = cause
        #: the message of a drop (``IgnoreRequest``), or what allowed it
        self.reason = reason
        #: the usage sources and the usage decision (``None``: no purpose declared,
        #: or robots.txt already refused the request)
        self.usage = usage
        #: the site's tdmrep.json rules it was decided with (``None``: not read)
        self.tdmrep = tdmrep

    @property
    def fetch(self) -> bool:
        """Whether the request is downloaded."""
        return self.cause in FETCHED

    @property
    def refusal(self) -> Preference | None:
        """The usage preference that refuses a declared purpose, if any (a refusal
        left to the page included: ``cause`` then stays ``"allowed"``)."""
        return None if self.usage is None else self.usage[1].refusal

    @property
    def agent(self) -> str | None:
        """The ``ROBOTSTXT_ALSO_OBEY`` token whose group refused the request."""
        return self.robots.agent

    @property
    def verdict(self) -> Verdict | None:
        """The deciding robots.txt rule of a refusal (``None`` when allowed)."""
        return self.robots.verdict

    def verdicts(self) -> tuple[TokenVerdict, ...]:
        """Each token's verdict, ours first, then ``ROBOTSTXT_ALSO_OBEY``'s, with
        the deciding rule and line even when allowed (empty when the outcome has
        no rules: unavailable, unreachable, or a file that forbids nothing)."""
        robots = self.outcome.robots
        if robots is None or self.outcome.kind is not Kind.PARSED:
            return ()
        found = []
        for agent in (self.token, *self.policy.also_obey):
            verdict = robots.check(url=self.url, agent=agent)
            matched = verdict.matched_as if isinstance(verdict, ResolvedVerdict) else None
            found.append(TokenVerdict(agent, verdict.allowed, verdict.line, verdict.rule, matched))
        return tuple(found)

    @property
    def crawl_delay(self) -> float | None:
        """The Crawl-delay that applies to the request's site (:func:`crawl_delay_of`)."""
        return crawl_delay_of(self.outcome, (self.token, *self.policy.also_obey), self.policy)

    def __repr__(self) -> str:
        return f"<RequestDecision {self.cause} {self.url}>"


def decide_request(
    outcome: SiteOutcome,
    url: str,
    site: str,
    token: str,
    policy: DecisionPolicy,
    tdmrep: TdmRep | TdmRepUnread | None = None,
) -> RequestDecision:
    """THE decision for a request to ``url`` of ``site``, by ``outcome`` (the
    robots.txt in force) and ``tdmrep`` (the site's tdmrep.json rules in force;
    ``None`` when not read; :class:`TdmRepUnread` when it is still to be
    fetched, or failed), for ``token`` and ``policy``."""
    robots = outcome.decide(url, token, site, policy.also_obey)
    if not robots.allowed:
        return RequestDecision(
            outcome, url, token, policy, robots, robots.cause, robots.reason, tdmrep=tdmrep
        )
    if outcome.kind is Kind.NOT_DOWNLOADABLE:
        return RequestDecision(
            outcome, url, token, policy, robots, "not_checked", robots.reason, tdmrep=tdmrep
        )
    if not policy.purposes:
        return RequestDecision(
            outcome, url, token, policy, robots, "allowed", robots.reason, tdmrep=tdmrep
        )
    if isinstance(tdmrep, TdmRepUnread):
        if tdmrep.error is None:
            return RequestDecision(
                outcome, url, token, policy, robots, PENDING, robots.reason, tdmrep=tdmrep
            )
        reason = (
            f"Dropped: internal error while fetching {site}{TDMREP_PATH} ({tdmrep.error}); "
            "this is not the site's answer"
        )
        return RequestDecision(
            outcome, url, token, policy, robots, "internal_error", reason, tdmrep=tdmrep
        )
    sources = site_sources(outcome.robots, url, token, tdmrep)
    usage = decide_usage(sources, policy.purposes)
    refusal = usage.refusal
    if refusal is None or _left_to_page(usage, policy):
        return RequestDecision(
            outcome, url, token, policy, robots, "allowed", robots.reason, (sources, usage), tdmrep
        )
    if refusal.line is not None:
        reason = (
            f"Forbidden by usage preference, robots.txt line {refusal.line}: "
            f'"{refusal.rule}" refuses {refusal.category} ({outcome.source or site})'
        )
    else:
        policy_note = f"; tdm-policy {refusal.policy}" if refusal.policy else ""
        reason = (
            f"Forbidden by usage preference: {refusal.rule} refuses {refusal.category} "
            f"({site}{TDMREP_PATH}{policy_note})"
        )
    return RequestDecision(
        outcome, url, token, policy, robots, "usage", reason, (sources, usage), tdmrep
    )


def _left_to_page(usage: UsageDecision, policy: DecisionPolicy) -> bool:
    """Whether every refusal is tdmrep.json's alone, which the page's own
    ``tdm-reservation`` header or meta supersede (TDMRep final report,
    processing priority): with the page's signals read, such a request is
    downloaded and the page decides; a robots.txt refusal always drops."""
    return policy.page_decides and all(
        refused.source == TDMREP_PATH for refused in usage.refusals.values()
    )


def tdmrep_refusal(
    outcome: SiteOutcome, site: str, token: str, also: tuple[str, ...] = ()
) -> str | None:
    """Why ``outcome`` (the site's robots.txt in force) disallows its
    ``/.well-known/tdmrep.json`` to a crawler obeying ``token`` and ``also``
    (``ROBOTSTXT_ALSO_OBEY``): RFC 9309 2.2.2 exempts only ``/robots.txt``, so
    such a file is never fetched. ``None`` when it is allowed."""
    decision = outcome.decide(site + TDMREP_PATH, token, site, also)
    return None if decision.allowed else decision.reason


def asked_crawl_delay(outcome: SiteOutcome, tokens: Iterable[str]) -> float | None:
    """The Crawl-delay a site's robots.txt asks of a crawler obeying as each of
    ``tokens`` (ours, then ``ROBOTSTXT_ALSO_OBEY``'s): the longest, as written;
    ``None`` when none asks one. Not part of RFC 9309 (2.2.4 lets crawlers read
    other records); widely used."""
    delays = [delay for token in tokens if (delay := outcome.crawl_delay(token))]
    return max(delays) if delays else None


def crawl_delay_of(
    outcome: SiteOutcome, tokens: Iterable[str], policy: DecisionPolicy
) -> float | None:
    """The Crawl-delay honoured for a site: :func:`asked_crawl_delay`, at most
    ``ROBOTSTXT_CRAWL_DELAY_MAX``; ``None`` when none is asked."""
    asked = asked_crawl_delay(outcome, tokens)
    return None if asked is None else min(asked, policy.crawl_delay_max)

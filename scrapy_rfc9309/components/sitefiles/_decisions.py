"""``RequestDecisions``: each request's decision, made in one place, once.

The decision itself is the pure
:func:`~scrapy_rfc9309.sites._request_decision.decide_request`, with the
crawl's :class:`~scrapy_rfc9309.sites._request_decision.DecisionPolicy`; this
is where the crawl calls it: with the product token the request obeys as and
the site's tdmrep.json rules in force, and where a decision made at the
scheduler queue's pop is kept for the middleware. Held by the
:class:`~._service.SiteService`.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ...sites._request_decision import (
    PENDING,
    TDMREP_PENDING,
    RequestDecision,
    TdmRepUnread,
    decide_request,
)
from ._tdmrep_sites import FAILED_TDMREP

if TYPE_CHECKING:
    from scrapy.http import Request

    from ...parser._tdmrep import TdmRep
    from ...sites._outcome import SiteOutcome
    from ..settings._settings import RobotsTxtSettings
    from ._crawl_delay import CrawlDelays
    from ._usage_gate import UsageGate

__all__ = ["RequestDecisions"]

#: What a request's decision was made from (robots.txt outcome, token,
#: tdmrep.json rules), and the decision.
_Made = tuple["SiteOutcome", str, "TdmRep | TdmRepUnread | None", RequestDecision]


class RequestDecisions:
    """Each request's decision for one crawl, made once (RFC 9309 2.2.2, with the
    usage preferences of the declared purposes)."""

    def __init__(
        self,
        settings: RobotsTxtSettings,
        usage: UsageGate | None,
        crawl_delays: CrawlDelays,
    ) -> None:
        self.settings = settings
        #: told of each request allowed, with the token it obeys as (its group's
        #: Crawl-delay applies to the site too)
        self._crawl_delays = crawl_delays
        #: ROBOTSTXT_ALSO_OBEY, ROBOTSTXT_PURPOSES, ...: how each request is decided
        self.policy = settings.policy
        self._usage = usage
        #: request -> what its decision was made from and the decision, made at
        #: the queue's pop (``keep``), taken by the middleware
        self._decided: weakref.WeakKeyDictionary[Request, _Made] = weakref.WeakKeyDictionary()

    def token(self, request: Request) -> str:
        """The product token ``request`` obeys robots.txt as (RFC 9309 2.2.1)."""
        return self.settings.token_of(request)

    def decide(
        self, outcome: SiteOutcome, site: str, request: Request, *, keep: bool = False
    ) -> RequestDecision:
        """THE decision for ``request`` by ``outcome`` and the site's tdmrep.json in
        force (:func:`~scrapy_rfc9309.sites._request_decision.decide_request`, with
        the project's :class:`DecisionPolicy`): the one call that decides a request,
        for the scheduler queue at pop and the middleware alike.

        Made once: a decision made on the same outcome, token and tdmrep.json is
        taken again (a paced request is matched once, however many times it waited
        for its turn). ``keep``: kept for the next call (the queue's pop); else
        taken (the middleware's, the last)."""
        token = self.token(request)
        rules = self.tdmrep_rules(site)
        made = self._kept(request, keep)
        if made is not None and made[0] is outcome and made[1] == token and made[2] is rules:
            return made[3]
        decision = decide_request(outcome, request.url, site, token, self.policy, rules)
        if decision.fetch:
            self._crawl_delays.obeyed_as(site, outcome, token)
        if keep and decision.cause != PENDING:
            self._decided[request] = (outcome, token, rules, decision)
        return decision

    def _kept(self, request: Request, keep: bool) -> _Made | None:
        """The decision kept for ``request`` at its pop (taken unless ``keep``)."""
        decided = self._decided
        if not decided:  # nothing kept (no paced site): no weak reference made
            return None
        return decided.get(request) if keep else decided.pop(request, None)

    def tdmrep_rules(self, site: str) -> TdmRep | TdmRepUnread | None:
        """The site's tdmrep.json rules in force for the decision: ``None`` when no
        declared purpose needs them; :data:`TDMREP_PENDING` while not fetched; a
        :class:`TdmRepUnread` naming the error when it failed for a reason of ours."""
        usage = self._usage
        tdmrep = None if usage is None else usage.tdmrep
        if usage is None or tdmrep is None:
            return None
        rules = tdmrep.fresh(site)
        if rules is None:
            return TDMREP_PENDING
        if rules is FAILED_TDMREP:
            return TdmRepUnread(tdmrep.failures.get(site, "see the log"))
        if rules.findings:
            usage.tell_findings(site, rules)
        return rules

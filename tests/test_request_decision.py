"""THE decision for one request (``sites._request_decision``): pure unit tests.

The crawl and every form of ``scrapy robotstxt`` read this one function; these
tests pin what it answers for each kind of input. Real crawls that compare the
crawl with the command are in ``test_decision_parity.py``.
"""

from __future__ import annotations

import json

import pytest

from scrapy_rfc9309 import RobotsTxt
from scrapy_rfc9309.parser._tdmrep import parse_tdmrep
from scrapy_rfc9309.sites._outcome import Kind, SiteOutcome
from scrapy_rfc9309.sites._request_decision import (
    DecisionPolicy,
    RequestDecision,
    TokenVerdict,
    decide_request,
)

SITE = "https://example.com"
ROBOTS = (
    "User-agent: ExampleBot\n"  # 1
    "Disallow: /private\n"  # 2
    "Allow: /private/ok\n"  # 3
    "Content-Usage: /ai/ train-ai=n\n"  # 4
    "Crawl-delay: 2\n"  # 5
    "\n"  # 6
    "User-agent: GPTBot\n"  # 7
    "Disallow: /\n"  # 8
    "Crawl-delay: 90\n"  # 9
)


def _parsed(text: str = ROBOTS) -> SiteOutcome:
    return SiteOutcome(
        Kind.PARSED,
        RobotsTxt.parse(text),
        "HTTP 200",
        1e12,
        ((SITE + "/robots.txt", 200),),
    )


def _decide(
    url: str,
    policy: DecisionPolicy | None = None,
    outcome: SiteOutcome | None = None,
    tdmrep: bytes | None = None,
) -> RequestDecision:
    return decide_request(
        outcome or _parsed(),
        SITE + url,
        SITE,
        "examplebot",
        policy or DecisionPolicy(),
        None if tdmrep is None else parse_tdmrep(tdmrep),
    )


def test_rfc9309_2_2_2_a_rule_of_our_group_drops_naming_its_line() -> None:
    decision = _decide("/private/x")
    assert not decision.fetch and decision.cause == "rule"
    assert decision.verdict is not None and decision.verdict.line == 2
    assert 'line 2: "Disallow: /private"' in decision.reason
    assert decision.agent is None


def test_rfc9309_2_2_2_allowed_carries_each_tokens_verdict_on_demand() -> None:
    decision = _decide("/private/ok", DecisionPolicy(also_obey=("otherbot",)))
    assert decision.fetch and decision.cause == "allowed"
    assert decision.verdicts() == (
        TokenVerdict("examplebot", True, 3, "Allow: /private/ok", None),
        TokenVerdict("otherbot", True, None, None, None),
    )


def test_rfc9309_2_2_1_also_obey_token_refuses_by_its_own_group() -> None:
    decision = _decide("/a", DecisionPolicy(also_obey=("GPTBot",)))
    assert decision.cause == "rule" and decision.agent == "GPTBot"
    assert "for GPTBot (ROBOTSTXT_ALSO_OBEY)" in decision.reason
    assert [v.allowed for v in decision.verdicts()] == [True, False]


def test_lenient_dot_segments_verdict_says_the_path_matched() -> None:
    decision = _decide("/./private/x")
    assert decision.cause == "rule"
    (own,) = decision.verdicts()
    assert own.matched_as == "/private/x"


@pytest.mark.parametrize(
    ("kind", "cause"),
    [
        (Kind.UNREACHABLE, "unreachable"),
        (Kind.RESTRICTED, "restricted"),
        (Kind.INTERNAL_ERROR, "internal_error"),
    ],
)
def test_rfc9309_2_3_1_4_disallow_all_outcomes_drop_with_their_cause(
    kind: Kind, cause: str
) -> None:
    outcome = SiteOutcome(kind, None, "HTTP 503", 1e12, ((SITE + "/robots.txt", 503),))
    decision = _decide("/a", outcome=outcome)
    assert not decision.fetch and decision.cause == cause
    assert decision.verdicts() == ()


def test_rfc9309_2_3_1_3_unavailable_allows_everything() -> None:
    outcome = SiteOutcome(Kind.UNAVAILABLE, None, "HTTP 404", 1e12)
    decision = _decide("/private", DecisionPolicy(purposes=("train-ai",)), outcome=outcome)
    assert decision.fetch and decision.cause == "allowed" and decision.refusal is None


def test_a_site_the_crawler_cannot_download_is_not_checked() -> None:
    outcome = SiteOutcome(Kind.NOT_DOWNLOADABLE, None, "no handler", 1e12)
    decision = _decide("/private", outcome=outcome)
    assert decision.fetch and decision.cause == "not_checked"


def test_aipref_a_robots_txt_usage_line_refuses_a_declared_purpose() -> None:
    """AIPREF attach: a ``Content-Usage`` line of our group refuses ``train-ai``
    for its path; the drop names the line."""
    policy = DecisionPolicy(purposes=("train-ai",))
    decision = _decide("/ai/x", policy)
    assert not decision.fetch and decision.cause == "usage"
    assert decision.refusal is not None and decision.refusal.line == 4
    assert "robots.txt line 4" in decision.reason
    assert _decide("/other", policy).fetch


def test_usage_is_not_read_when_robots_txt_refuses() -> None:
    decision = _decide("/private/x", DecisionPolicy(purposes=("train-ai",)))
    assert decision.cause == "rule" and decision.usage is None


TDMREP = json.dumps([{"location": "/books/*", "tdm-reservation": 1}]).encode()


def test_tdmrep_a_reservation_drops_without_page_signals() -> None:
    """TDMRep: a reservation of 1 refuses text and data mining (``train-ai``)."""
    decision = _decide("/books/a", DecisionPolicy(purposes=("train-ai",)), tdmrep=TDMREP)
    assert decision.cause == "usage"
    assert "/.well-known/tdmrep.json" in decision.reason


def test_tdmrep_a_reservation_alone_is_left_to_the_page_when_it_is_read() -> None:
    """TDMRep final report: the page's own header and meta supersede the file,
    so with page signals read the request is fetched and the page decides."""
    policy = DecisionPolicy(purposes=("train-ai",), page_decides=True)
    decision = _decide("/books/a", policy, tdmrep=TDMREP)
    assert decision.fetch and decision.refusal is not None


def test_a_robots_txt_refusal_is_never_left_to_the_page() -> None:
    policy = DecisionPolicy(purposes=("train-ai",), page_decides=True)
    assert _decide("/ai/x", policy).cause == "usage"


def test_crawl_delay_is_the_longest_of_the_tokens_obeyed_within_the_cap() -> None:
    assert _decide("/a").crawl_delay == 2.0
    capped = DecisionPolicy(also_obey=("GPTBot",), crawl_delay_max=60.0)
    assert _decide("/a", capped).crawl_delay == 60.0
    compacted = _parsed().compact()
    assert _decide("/a", capped, outcome=compacted).crawl_delay == 60.0
    assert _decide("/a", outcome=_parsed("User-agent: *\nDisallow: /x\n")).crawl_delay is None

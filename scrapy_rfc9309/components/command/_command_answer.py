"""``scrapy robotstxt``'s answers: each URL's verdict as data, and the exit status. Pure.

The answer is the ``--json`` object; no Scrapy import. :func:`explain_url`
builds the one answer dict per URL from a robots.txt outcome, the site's
tdmrep.json and, with ``--page``, the page's own usage signals; the usage part is decided by
:func:`~._usage_decision.decide_usage`, as the crawl decides it. The text
output (:mod:`._command_text`) is drawn from the same dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...parser._directives import PageDirectives
from ...parser._dots import resolved_url
from ...parser._robotstxt import RobotsTxt
from ...parser._tdmrep import TDMREP_PATH, TdmRep
from ...parser._usage import Preference
from ...parser._usage_decision import (
    UsageSources,
    decide_usage,
    site_sources,
    usage_as_served,
)
from ...sites._outcome import DISALLOW_ALL, Kind, SiteOutcome
from ...sites._request_decision import (
    DecisionPolicy,
    TdmRepUnread,
    TokenVerdict,
    decide_request,
)
from ...sites._site import site_of

__all__ = [
    "EXIT_ALLOWED",
    "EXIT_DISALLOWED",
    "EXIT_ERROR",
    "EXIT_NO_ROBOTS",
    "EXIT_PAGE_UNREAD",
    "EXIT_USAGE_REFUSED",
    "PageNotRead",
    "PageRead",
    "PageResult",
    "agent_lines",
    "exit_code",
    "explain_url",
    "no_site_reason",
    "page_answer",
    "page_note",
    "tdmrep_note",
]

#: Exit status, for scripts (several URLs: the first that applies, in this order).
EXIT_ALLOWED = 0
EXIT_DISALLOWED = 1  # a rule disallows a URL; with --lint: the file has findings
EXIT_ERROR = 2  # bad arguments or settings, an unreadable file, a URL that is not absolute
EXIT_NO_ROBOTS = 3  # robots.txt unreachable (all disallowed) or unavailable (all allowed)
EXIT_USAGE_REFUSED = 4  # allowed, but a usage preference refuses a declared purpose
EXIT_PAGE_UNREAD = 5  # --page: a page robots.txt allows could not be downloaded

EXIT_CODES_HELP = """\
exit status (several URLs: the first that applies, in this order):
  2  error: bad arguments or settings, an unreadable file, a URL that is not absolute
     or not http(s),
     an internal error; with --at or history: no copy in the store, a store that fails
  1  a robots.txt rule disallows a URL (with --lint: the file has findings)
  4  robots.txt allows a URL, but a usage preference (robots.txt Content-Usage /
     Content-Signal, tdmrep.json, or with --page the page's own signals where the
     crawl reads them) refuses a declared purpose (--purpose, or ROBOTSTXT_PURPOSES)
  3  a robots.txt is unreachable (RFC 9309 2.3.1.4: every URL disallowed),
     unavailable (2.3.1.3: every URL allowed) or, with ROBOTSTXT_AUTH_DISALLOW,
     answered 401/403 (every URL disallowed); the verdict says which
  5  with --page: a page robots.txt allows could not be read (time-out, connection
     refused or reset); the page line says why
  0  every URL allowed (with --lint: no findings)
"""


def agent_lines(robots: RobotsTxt, token: str) -> list[list[tuple[int, str]]]:
    """The user-agent lines of each group that governs ``token``, as the file spells
    them: ``[[(line, "User-agent: ExampleBot"), ...], ...]``. One pass over the body."""
    lines = robots.body.split(b"\n")

    def text(number: int) -> str:
        raw = lines[number - 1] if 0 < number <= len(lines) else b""
        return raw.decode("utf-8", "replace").strip(" \t\r")

    return [
        [(number, text(number)) for number, _ in group.agents] for group in robots.groups_for(token)
    ]


#: A site's tdmrep.json as the command read it: its rules (``None``: not read; a
#: :class:`TdmRepUnread` naming the error when it failed for a reason of ours,
#: which drops the site's requests in a crawl) and what the fetch came to
#: (``HTTP 200, 2 rules``, ``not read with --file``).
TdmRepAnswer = tuple[TdmRep | TdmRepUnread | None, str]
#: How the detail of a tdmrep.json that failed for a reason of ours starts.
INTERNAL_ERROR = "internal error"


def explain_url(
    outcome: SiteOutcome | None,
    url: str,
    token: str,
    error: str = "not an absolute URL",
    purposes: tuple[str, ...] = (),
    tdmrep: TdmRepAnswer | None = None,
    page: PageResult | None = None,
    also: tuple[str, ...] = (),
    noai: bool = False,
    policy: DecisionPolicy | None = None,
) -> dict[str, Any]:
    """One URL's answer as data (the ``--json`` object); ``error`` when no outcome.

    The verdict is the crawl's own: :func:`~..sites._request_decision.decide_request`
    with the project's :class:`DecisionPolicy` (``policy``; else one of ``also``
    and ``purposes``). ``also`` (``ROBOTSTXT_ALSO_OBEY``): further tokens that
    must allow the URL too (``also_obey`` has each one's verdict; when one
    refuses, ``verdict``, ``rule`` and ``line`` are its own, ``decided_by``
    names it, else ``decided_by`` is ``None``: our own token's verdict stands).
    ``noai`` (``ROBOTS_META_NOAI``): the page's ``noai`` / ``noimageai``
    directives refuse ``train-ai``. ``cause`` is the crawl's:
    ``allowed``, or the ``robotstxt/forbidden/{cause}`` of its drop.

    With ``purposes``, a URL that robots.txt allows is checked against its usage
    preferences (robots.txt lines, ``tdmrep`` when given, and the signals of
    ``page`` when it was read), as the crawl checks it: ``refused`` names the
    preference that refuses one, else ``None``.
    """
    if policy is None:
        policy = DecisionPolicy(also_obey=also, purposes=purposes)
    purposes = policy.purposes
    answer: dict[str, Any] = {
        "url": url,
        "agent": token,
        "verdict": "error",
        "cause": None,
        "rule": None,
        "line": None,
        "matched_as": None,
        "robots_txt": [],
        "group": [],
        "outcome": None,
        "detail": None,
        "lifetime": None,
        "usage": {},
    }
    if purposes:
        answer["purposes"] = list(purposes)
        answer["refused"] = None
        answer["tdmrep"] = None
    if outcome is None:
        answer["detail"] = error
        return answer
    answer["robots_txt"] = [{"url": u, "status": status} for u, status in outcome.chain]
    answer["outcome"] = outcome.kind.value
    answer["detail"] = outcome.detail
    answer["lifetime"] = lifetime_of(outcome)
    site = (site_of(url) if "://" in url else None) or ""
    rules = tdmrep[0] if tdmrep is not None else None
    try:
        decision = decide_request(outcome, url, site, token, policy, rules)
    except ValueError as problem:  # not a URL the matcher reads
        answer["detail"] = str(problem)
        return answer
    answer["cause"] = decision.cause
    # the page's own signals decide only where the crawl reads them, after a
    # download it makes (RobotsMetaMiddleware, ROBOTS_META_OBEY)
    read = page if decision.fetch and policy.page_decides else None
    if outcome.kind in DISALLOW_ALL:
        answer["verdict"] = "disallowed"
        _no_rules(answer, also, allowed=False)
        return answer
    if decision.cause == "not_checked":  # as a crawl: passed to Scrapy unchecked
        answer["cause"] = None
        answer["detail"] = not_downloadable_reason(url, outcome.detail)
        return answer
    robots = outcome.robots
    if robots is None:
        answer["verdict"] = "allowed"
        _no_rules(answer, also, allowed=True)
        _check_purposes(answer, UsageSources(), url, purposes, tdmrep, read, noai=noai)
        return answer
    assert isinstance(robots, RobotsTxt)  # fresh from the fetcher or a file, not compacted
    own, *others = decision.verdicts()
    deciding = own
    if also:
        answer["also_obey"] = [_token_answer(robots, verdict) for verdict in others]
        # the listed token that refused; None: our own token's verdict stands
        answer["decided_by"] = decision.agent
        if decision.agent is not None:
            deciding = next(v for v in others if v.agent == decision.agent)
    answer["verdict"] = "allowed" if decision.robots.allowed else "disallowed"
    answer["rule"] = deciding.rule
    answer["line"] = deciding.line
    answer["matched_as"] = deciding.matched_as
    sources = site_sources(robots, url, token)
    answer["usage"] = sources.robots_txt.as_dict()
    if decision.robots.allowed:
        _check_purposes(answer, sources, url, purposes, tdmrep, read, noai=noai)
    groups = agent_lines(robots, token)
    answer["group"] = [{"line": number, "text": text} for group in groups for number, text in group]
    # what the text output shows besides (drawn from this same dict)
    answer["groups"] = [
        [{"line": number, "text": text} for number, text in group] for group in groups
    ]
    answer["robots_usage"] = sources.robots_txt.as_dict()
    # the longest of the tokens obeyed, as the file asks it (the crawl caps it
    # at ROBOTSTXT_CRAWL_DELAY_MAX: ``crawl_delay_applied``)
    delays = [delay for agent in (token, *also) if (delay := robots.crawl_delay(agent))]
    answer["crawl_delay"] = max(delays) if delays else robots.crawl_delay(token)
    answer["crawl_delay_applied"] = decision.crawl_delay
    answer["sitemaps"] = list(robots.sitemaps)
    answer["warnings"] = [{"line": line, "message": message} for line, message in robots.warnings]
    return answer


def _no_rules(answer: dict[str, Any], also: tuple[str, ...], *, allowed: bool) -> None:
    """The keys of an answer with no rules read (robots.txt unavailable, RFC 9309
    2.3.1.3, or unreachable, 2.3.1.4): present, empty, as for a parsed file;
    each ``ROBOTSTXT_ALSO_OBEY`` token has the whole site's verdict."""
    verdict = "allowed" if allowed else "disallowed"
    if also:
        answer["also_obey"] = [
            {"agent": agent, "verdict": verdict, "rule": None, "line": None, "group": []}
            for agent in also
        ]
        answer["decided_by"] = None  # the whole site's outcome, no listed token's rule
    answer.update(
        groups=[],
        robots_usage={},
        crawl_delay=None,
        crawl_delay_applied=None,
        sitemaps=[],
        warnings=[],
    )


def lifetime_of(outcome: SiteOutcome) -> str | None:
    """What set how long ``outcome`` is used, as ``history`` says it of a stored
    copy: its cache directive or setting, else ``Retry-After`` or
    ``ROBOTSTXT_UNREACHABLE_TTL`` for an unreachable site; ``None`` when the
    outcome is not kept (a local file, an internal error)."""
    if outcome.lifetime:
        return outcome.lifetime
    if outcome.kind is Kind.UNREACHABLE:
        return "Retry-After" if outcome.retry_after else "ROBOTSTXT_UNREACHABLE_TTL"
    return None


def _token_answer(robots: RobotsTxt, verdict: TokenVerdict) -> dict[str, Any]:
    """One ``ROBOTSTXT_ALSO_OBEY`` token's verdict, with its group (RFC 9309 2.2.1)."""
    return {
        "agent": verdict.agent,
        "verdict": "allowed" if verdict.allowed else "disallowed",
        "rule": verdict.rule,
        "line": verdict.line,
        "group": [
            {"line": number, "text": text}
            for group in agent_lines(robots, verdict.agent)
            for number, text in group
        ],
    }


def _check_purposes(
    answer: dict[str, Any],
    sources: UsageSources,
    url: str,
    purposes: tuple[str, ...],
    tdmrep: TdmRepAnswer | None,
    page: PageResult | None,
    *,
    noai: bool = False,
) -> None:
    """The usage decision (:func:`~._usage_decision.decide_usage`, as the crawl's):
    ``answer["usage"]`` and the refusal, if any; each source's preferences in
    ``answer["usage_sources"]``."""
    if not purposes:
        return
    if tdmrep is not None:
        rules, detail = tdmrep
        site = site_of(url) if "://" in url else None
        answer["tdmrep"] = {"url": site + TDMREP_PATH if site else None, "detail": detail}
        if isinstance(rules, TdmRep):
            served = usage_as_served(rules.usage, url, resolved_url(url))
            sources = sources._replace(tdmrep=served)
    if isinstance(page, PageRead):
        sources = sources.with_page(page.signals, page.unread)
        if noai:
            sources = sources.with_noai(page.directives.sources)
    decision = decide_usage(sources, purposes)
    answer["usage"] = decision.usage.as_dict()
    answer["usage_sources"] = {
        "robots_txt": sources.robots_txt.as_dict(),
        "tdmrep": sources.tdmrep.as_dict(),
        "page": sources.page.as_dict(),
        # each of the page's sources apart (TDMRep orders them: header, then meta)
        "header": sources.header.as_dict(),
        "tdm_header": sources.tdm_header.as_dict(),
        "tdm_meta": sources.tdm_meta.as_dict(),
    }
    if sources.noai:
        answer["usage_sources"]["noai"] = sources.noai.as_dict()
    if decision.refusal is not None:
        answer["refused"] = _refusal_dict(decision.refusal)
        # each refused purpose, with the preference that refuses it
        answer["refusals"] = {
            purpose: _refusal_dict(refused) for purpose, refused in decision.refusals.items()
        }


def tdmrep_note(answer: dict[str, Any]) -> str | None:
    """The ``note`` of an answer whose declared purposes only tdmrep.json refuses,
    without ``--page`` (else ``None``): TDMRep, the page's own header or meta
    supersedes the file, so what a crawl does depends on whether it reads the
    page's signals (``cause``: ``allowed`` when it does). An ``--at`` answer
    (``at``) reads no page."""
    refusals = answer.get("refusals") or {}
    if "page" in answer or not any(
        refused["source"] == TDMREP_PATH for refused in refusals.values()
    ):
        return None
    if answer.get("cause") == "allowed":
        then = "this crawl downloads such a page and decides by it"
        if "at" not in answer:  # --at reads the store, never the page
            then += ": --page shows that decision"
    else:
        then = (
            "this crawl reads no page's signals (ROBOTS_META_OBEY off, or "
            "RobotsMetaMiddleware not enabled), so it drops the request before download"
        )
    return "the page's own tdm-reservation header or meta supersedes tdmrep.json (TDMRep); " + then


def page_note(page: PageResult | None, policy: DecisionPolicy) -> str | None:
    """The ``note`` of an answer whose page ``--page`` read, when the crawl reads
    no page's usage signals (``policy.page_decides`` off): they are not part of
    its decision, so they are not part of the answer's. ``None`` otherwise."""
    if policy.page_decides or not policy.purposes or not isinstance(page, PageRead):
        return None
    return (
        "this crawl reads no page's usage signals (ROBOTS_META_OBEY off, or "
        "RobotsMetaMiddleware not enabled): the page's own headers and meta decide nothing"
    )


def _refusal_dict(refusal: Preference) -> dict[str, Any]:
    return {
        "category": refusal.category,
        "value": refusal.value,
        "source": refusal.source,
        "line": refusal.line,
        "rule": refusal.rule,
        "policy": refusal.policy,
    }


#: Outcomes that decide for the whole site, whatever the URL (exit status 3).
WHOLE_SITE_OUTCOMES = frozenset(
    kind.value for kind in (Kind.UNREACHABLE, Kind.UNAVAILABLE, Kind.RESTRICTED)
)


def exit_code(answers: Iterable[dict[str, Any]]) -> int:
    """The command's exit status for these answers (see ``EXIT_CODES_HELP``)."""
    codes = set()
    for answer in answers:
        if (
            answer["verdict"] == "error"
            or answer["outcome"] == Kind.INTERNAL_ERROR.value
            or answer.get("cause") == "internal_error"  # robots.txt's, or tdmrep.json's
        ):
            codes.add(EXIT_ERROR)
        elif answer["outcome"] in WHOLE_SITE_OUTCOMES:
            codes.add(EXIT_NO_ROBOTS)
        elif answer["verdict"] == "disallowed":
            codes.add(EXIT_DISALLOWED)
        elif answer.get("refused"):
            codes.add(EXIT_USAGE_REFUSED)
        page = answer.get("page") or {}
        if page.get("failed"):
            codes.add(EXIT_PAGE_UNREAD)
        elif page.get("internal_error"):
            codes.add(EXIT_ERROR)
    for code in (
        EXIT_ERROR,
        EXIT_DISALLOWED,
        EXIT_USAGE_REFUSED,
        EXIT_NO_ROBOTS,
        EXIT_PAGE_UNREAD,
    ):
        if code in codes:
            return code
    return EXIT_ALLOWED


@dataclass(frozen=True)
class PageNotRead:
    """Why ``--page`` has no directives for a URL: ``reason``; the HTTP ``status``
    when there was a response (a redirect); ``failed`` when the page was requested
    but could not be downloaded (time-out, connection refused or reset);
    ``internal_error`` when its download failed for a reason of ours."""

    reason: str
    status: int | None = None
    failed: bool = False
    internal_error: bool = False


class PageRead(NamedTuple):
    """What ``--page`` read of a page: its status, its directives for the agent, and
    its usage signals (``read_usage_signals``: ``Content-Usage``, ``tdm-reservation``)."""

    status: int
    directives: PageDirectives
    signals: Sequence[tuple[str, str]] = ()
    #: the usage headers read only in part, with the limits met (they refuse
    #: what they can state, as in a crawl)
    unread: Mapping[str, frozenset[str]] = {}


#: What ``--page`` learnt of one URL, or why it was not read.
PageResult = PageRead | PageNotRead


def no_site_reason(url: str) -> str:
    """Why ``url`` has no robots.txt site to ask (the ``detail`` of an error answer)."""
    scheme, colon, _ = url.partition(":")
    if not colon or "/" in scheme:
        return "not an absolute URL"
    if scheme.lower() not in ("http", "https"):
        return (
            f"not an http(s) URL ({scheme}:): robots.txt does not apply; a crawl passes "
            "it to Scrapy unchecked"
        )
    return "not a valid http(s) URL (no host, or a malformed host or port)"


def page_answer(result: PageResult | None) -> dict[str, Any]:
    """``--page``'s part of a URL's answer (the ``page`` object of ``--json``)."""
    if result is None:
        result = PageNotRead("not fetched")
    if isinstance(result, PageNotRead):
        return {
            "status": result.status,
            "directives": [],
            "sources": {},
            "error": result.reason,
            "failed": result.failed,
            "internal_error": result.internal_error,
            "truncated": [],
            "lenient": [],
        }
    status, page = result.status, result.directives
    unread = {f"{limit} ({source})" for source, limits in result.unread.items() for limit in limits}
    return {
        "status": status,
        "directives": sorted(page.directives),
        "sources": {name: list(page.sources.get(name, ())) for name in sorted(page.directives)},
        "error": None,
        "failed": False,
        "internal_error": False,
        "truncated": sorted(page.truncated | unread),
        "lenient": sorted(page.lenient),
    }


def not_downloadable_reason(url: str, detail: str) -> str:
    """Why a URL the crawler cannot download is not checked (``htp:``, ``s3:``
    without botocore): said as for a URL robots.txt does not apply to."""
    scheme = url.partition(":")[0]
    return (
        f"not an http(s) URL ({scheme}:): Scrapy cannot download it ({detail}); a crawl "
        "passes it to Scrapy unchecked, which fails it"
    )

"""A crawl's record checked: its hash chain, and each decision made again from it. Pure.

``scrapy robotstxt audit`` reads each line of a record (:mod:`._record_lines`)
and checks that its ``prev`` is the SHA-256 of the line before (an edit, a
removal or a reordering breaks the chain at the next line), then decides
each ``request`` line again with :func:`~._request_decision.decide_request`,
the decision function of the crawl, from the robots.txt copy (and
tdmrep.json) the line names, the header's policy and the line's token: the
decision, its cause, its reason and each token's verdict must be the ones
recorded. A last line cut short (the crawl was killed while writing) is
reported, not counted as a break.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..parser._robotstxt import RobotsTxt
from ..parser._tdmrep import TdmRep, parse_tdmrep
from ._outcome import Kind, SiteOutcome
from ._record_lines import FORMAT, GENESIS, body_of, line_hash, request_entry
from ._request_decision import DecisionPolicy, TdmRepUnread, decide_request

__all__ = ["AuditResult", "audit_lines"]

#: The fields of a request line that the decision made again must give.
_DECIDED = ("decision", "cause", "reason", "verdicts", "usage", "crawl_delay")


@dataclass
class AuditResult:
    """What the audit of one record found."""

    #: request lines whose decision was made again and matched
    verified: int = 0
    #: request lines not decided by robots.txt (dropped at close): counted apart
    undecided: int = 0
    #: lines read (the partial last line not included)
    lines: int = 0
    #: ``(line number, what is wrong)``: breaks of the chain and mismatches
    problems: list[tuple[int, str]] = field(default_factory=list)
    #: the line number of a last line cut short, if any
    partial: int | None = None
    #: lines cut short by a crawl killed while writing, another run appended after
    cut: list[int] = field(default_factory=list)
    #: whether the record ends with its ``close`` line (the crawl closed)
    closed: bool = False
    #: the hash of the last whole line: the head of the chain
    head: str = GENESIS
    #: the crawls in the record (its header lines): a crawl appended to a file
    #: chains on from the lines before it
    runs: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and self.lines > 0


@dataclass
class _State:
    policy: DecisionPolicy | None = None
    max_size: int = 512_000
    auth_disallow: bool = False
    #: line hash -> (site, outcome) of each robots.txt copy
    copies: dict[str, tuple[str, SiteOutcome]] = field(default_factory=dict)
    #: line hash -> (site, rules) of each tdmrep.json
    tdmreps: dict[str, tuple[str, TdmRep]] = field(default_factory=dict)


def audit_lines(lines: Iterable[tuple[str, bool]]) -> AuditResult:
    """Audit a record given as its lines, each ``(text, complete)`` (``complete``:
    it ended with a line end; only the last may not)."""
    result = AuditResult()
    state = _State()
    previous = GENESIS
    #: the hash of the last line that is JSON: a crawl appended after a run cut
    #: mid-line chains on from it
    before_cut = GENESIS
    cut: list[int] = []
    for number, (text, complete) in enumerate(lines, 1):
        if not complete:
            result.partial = number
            break
        result.lines = number
        try:
            entry = json.loads(text)
        except ValueError:
            entry = None
        if not isinstance(entry, dict):
            cut.append(number)
            previous = line_hash(text)
            continue
        if cut and entry.get("type") == "header" and entry.get("prev") == before_cut:
            # a run killed while writing, then another appended to the same file,
            # chained on from the last whole line before the cut
            result.cut.extend(cut)
            previous = before_cut
        else:
            result.problems.extend(
                (line, "not a JSON object: the line was changed") for line in cut
            )
        cut = []
        if entry.get("prev") != previous:
            result.problems.append((number, _break(number)))
        previous = before_cut = line_hash(text)
        result.closed = False
        try:
            problem = _check(entry, number, previous, state, result)
        except (KeyError, TypeError, ValueError) as error:
            problem = f"a field is missing or not as written by the crawl: {error!r}"
        if problem is not None:
            result.problems.append((number, problem))
    result.problems.extend((line, "not a JSON object: the line was changed") for line in cut)
    result.head = previous
    return result


def _break(number: int) -> str:
    if number == 1:
        return "the chain does not start here: lines were removed before it"
    return (
        f"the chain is broken: this line does not follow line {number - 1} as written "
        f"(line {number - 1} was changed, or lines were removed, added or moved here)"
    )


def _check(
    entry: dict[str, Any], number: int, digest: str, state: _State, result: AuditResult
) -> str | None:
    kind = entry.get("type")
    if kind == "header":
        return _header(entry, state, result)
    if state.policy is None:
        return "no header line before this one"
    if kind == "robots":
        state.copies[digest] = (str(entry["site"]), _outcome(entry, state))
        return None
    if kind == "tdmrep":
        body = body_of(entry)
        rules = parse_tdmrep(body) if body is not None else TdmRep()
        state.tdmreps[digest] = (str(entry["site"]), rules)
        return None
    if kind == "request":
        return _request(entry, state, result)
    if kind == "close":
        result.closed = True
        return None
    if kind in ("page", "page_drop"):
        return None
    return f"an unknown line type {kind!r}"


def _header(entry: dict[str, Any], state: _State, result: AuditResult) -> str | None:
    result.runs += 1
    state.copies.clear()
    state.tdmreps.clear()
    if entry.get("format") != FORMAT:
        return f"record format {entry.get('format')!r}, not {FORMAT}"
    policy = entry["policy"]
    state.policy = DecisionPolicy(
        also_obey=tuple(policy["also_obey"]),
        purposes=tuple(policy["purposes"]),
        page_decides=bool(policy["page_decides"]),
        crawl_delay_max=float(policy["crawl_delay_max"]),
    )
    state.max_size = int(entry["robots"]["max_size"])
    state.auth_disallow = bool(entry["robots"]["auth_disallow"])
    return None


def _outcome(entry: dict[str, Any], state: _State) -> SiteOutcome:
    """The outcome a ``robots`` line stands for, its body parsed again."""
    kind = Kind(entry["outcome"])
    body = body_of(entry)
    robots = None
    if kind is Kind.PARSED and body is not None:
        robots = RobotsTxt.parse(body, max_size=state.max_size)
    chain = tuple(
        (str(url), None if status is None else int(status)) for url, status in entry["chain"]
    )
    return SiteOutcome(
        kind,
        robots,
        str(entry["detail"]),
        0.0,
        chain,
        str(entry["lifetime"]),
        retry_after=bool(entry["retry_after"]),
    )


def _request(entry: dict[str, Any], state: _State, result: AuditResult) -> str | None:
    if entry["robots"] is None:  # dropped at close, never decided by robots.txt
        if entry["decision"] != "dropped":
            return "a request fetched without a robots.txt copy in force"
        result.undecided += 1
        return None
    site = str(entry["site"])
    found = state.copies.get(entry["robots"])
    if found is None:
        return f"names a robots.txt copy not in the record before it ({entry['robots'][:12]})"
    if found[0] != site:
        return f"names the robots.txt copy of another site ({found[0]})"
    tdmrep: TdmRep | TdmRepUnread | None = None
    named = entry["tdmrep"]
    if isinstance(named, dict):
        tdmrep = TdmRepUnread(str(named["error"]))
    elif named is not None:
        rules = state.tdmreps.get(named)
        if rules is None or rules[0] != site:
            return f"names a tdmrep.json not in the record before it ({str(named)[:12]})"
        tdmrep = rules[1]
    assert state.policy is not None
    url = str(entry["url"])
    decision = decide_request(found[1], url, site, str(entry["token"]), state.policy, tdmrep)
    again = request_entry(
        decision, site=site, method="", now=0.0, robots=entry["robots"], tdmrep=named
    )
    again = json.loads(json.dumps(again))
    differ = [name for name in _DECIDED if entry.get(name) != again.get(name)]
    if differ:
        shown = "; ".join(
            f"{name}: recorded {entry.get(name)!r}, decided {again.get(name)!r}" for name in differ
        )
        return f"the decision made again differs: {shown}"
    result.verified += 1
    return None
